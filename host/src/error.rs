//! The two kinds of failure the `fanin` binary distinguishes by exit status.

/// A mistake in the command line or its input files (exit status 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InputError(pub String);

/// Builds an [`anyhow::Error`] that the binary reports as an input error.
pub fn input_error(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(InputError(msg.into()))
}

/// Exit status for `e`: 2 for input errors anywhere in its chain, 1 otherwise.
pub fn exit_code(e: &anyhow::Error) -> i32 {
    if e.chain().any(|c| c.is::<InputError>()) {
        2
    } else {
        1
    }
}
