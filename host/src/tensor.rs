//! Gradient tensors on disk: raw little-endian f32 files and `.npy` (f32) files.

use std::io;
use std::path::{Path, PathBuf};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Why a tensor could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum TensorError {
    /// The file could not be opened or read.
    #[error("cannot read tensor file {path}: {source}")]
    Read {
        /// File.
        path: PathBuf,
        /// Cause.
        source: io::Error,
    },
    /// The file could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// File.
        path: PathBuf,
        /// Cause.
        source: io::Error,
    },
    /// A raw file whose length is not a whole number of f32 values.
    #[error(
        "tensor file {path} is {len} bytes, not a whole number of 4-byte f32 values (truncated?)"
    )]
    Ragged {
        /// File.
        path: PathBuf,
        /// Its length.
        len: u64,
    },
    /// No elements at all.
    #[error("tensor file {0} holds no elements")]
    Empty(PathBuf),
    /// Fewer (or more) elements than the command line promised.
    #[error("tensor file {path} has {got} elements, but --elements says {want}")]
    Count {
        /// File.
        path: PathBuf,
        /// Elements found.
        got: usize,
        /// Elements expected.
        want: usize,
    },
    /// A `.npy` file that is not f32 or is damaged.
    #[error("tensor file {path} is not a readable f32 .npy file: {why}")]
    Npy {
        /// File.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// NaN or infinity, which quantisation cannot represent.
    #[error(
        "tensor element {index} is {value}, which cannot be quantised (only finite values can)"
    )]
    NonFinite {
        /// Index of the first bad element.
        index: usize,
        /// Its value.
        value: f32,
    },
}

const NPY_MAGIC: &[u8] = b"\x93NUMPY";

/// Reads a tensor: `.npy` if the file starts with the NumPy magic, raw little-endian f32 otherwise.
pub fn read(path: &Path) -> Result<Vec<f32>, TensorError> {
    let bytes = std::fs::read(path).map_err(|source| TensorError::Read {
        path: path.into(),
        source,
    })?;
    let v = if bytes.starts_with(NPY_MAGIC) {
        read_npy(path, &bytes)?
    } else {
        if bytes.len() % 4 != 0 {
            return Err(TensorError::Ragged {
                path: path.into(),
                len: bytes.len() as u64,
            });
        }
        bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    };
    if v.is_empty() {
        return Err(TensorError::Empty(path.into()));
    }
    Ok(v)
}

fn read_npy(path: &Path, bytes: &[u8]) -> Result<Vec<f32>, TensorError> {
    let bad = |why: String| TensorError::Npy {
        path: path.into(),
        why,
    };
    let f = npyz::NpyFile::new(bytes).map_err(|e| bad(e.to_string()))?;
    let want = f.len() as usize;
    let dtype = f.dtype();
    let data = f
        .data::<f32>()
        .map_err(|_| bad(format!("element type is {dtype:?}, not f32")))?;
    let mut v = Vec::with_capacity(want);
    for x in data {
        v.push(x.map_err(|e| bad(format!("truncated ({e})")))?);
    }
    if v.len() != want {
        return Err(bad(format!(
            "truncated: header promises {want} elements, found {}",
            v.len()
        )));
    }
    Ok(v)
}

/// Checks that every element is finite.
pub fn check_finite(v: &[f32]) -> Result<(), TensorError> {
    match v.iter().position(|x| !x.is_finite()) {
        Some(index) => Err(TensorError::NonFinite {
            index,
            value: v[index],
        }),
        None => Ok(()),
    }
}

/// `n` values uniform in `[-1, 1)` from `seed`.
///
/// Drawn in f64 and rounded, so small values keep all 24 mantissa bits and quantisation
/// really rounds (f32 draws are multiples of 2^-23, which quantise exactly).
pub fn synthetic(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| rng.gen_range(-1.0f64..1.0) as f32).collect()
}

/// `n` integers uniform in `[-range, range]` (as f32) from `seed`.
pub fn synthetic_int(n: usize, seed: u64, range: i32) -> Vec<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| rng.gen_range(-range..=range) as f32)
        .collect()
}

/// Writes a tensor: `.npy` if `path` ends in `.npy`, raw little-endian f32 otherwise.
pub fn write(path: &Path, v: &[f32]) -> Result<(), TensorError> {
    let werr = |source| TensorError::Write {
        path: path.into(),
        source,
    };
    if path.extension().is_some_and(|e| e == "npy") {
        npyz::to_file_1d(path, v.iter().copied()).map_err(werr)
    } else {
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        std::fs::write(path, bytes).map_err(werr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_and_npy_round_trip() {
        let dir = std::env::temp_dir().join(format!("fanin-tensor-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let v = synthetic(1000, 3);
        for name in ["t.f32", "t.npy"] {
            let p = dir.join(name);
            write(&p, &v).unwrap();
            assert_eq!(read(&p).unwrap(), v, "{name}");
        }
        let raw = dir.join("t.f32");
        let bytes = std::fs::read(&raw).unwrap();
        std::fs::write(&raw, &bytes[..bytes.len() - 2]).unwrap();
        assert!(matches!(read(&raw), Err(TensorError::Ragged { .. })));
        let npy = dir.join("t.npy");
        let bytes = std::fs::read(&npy).unwrap();
        std::fs::write(&npy, &bytes[..bytes.len() - 8]).unwrap();
        assert!(
            matches!(read(&npy), Err(TensorError::Npy { .. })),
            "{:?}",
            read(&npy)
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn non_finite_is_named() {
        let e = check_finite(&[1.0, f32::NAN]).unwrap_err();
        assert!(e.to_string().contains("element 1"));
    }
}
