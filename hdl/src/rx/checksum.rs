//! The ingress port's checksum pieces: the UDP and IPv4-header byte masks of a beat, their
//! masked group sums, the totals and the verdict flags (summed as the frame streams in).

use super::{cap_beats, ck_group, DESC_DEPTH};
use crate::parse::PARSE_W;
use rust_hdl::prelude::*;

/// A Verilog expression for `x > c` on the `n`-bit unsigned `x` (a signal name; bits
/// `x[n-1:0]`) against a constant, as plain logic (no comparator cell: yosys would map one
/// to a carry chain with a LUT level per operand bit group).
fn gt_const(x: &str, n: usize, c: usize) -> String {
    // x > c over bits i..0: if c[i] is set, x[i] and the rest; else x[i] or the rest.
    fn rec(x: &str, i: usize, c: usize) -> Option<String> {
        // None: false.
        let low = if i == 0 { None } else { rec(x, i - 1, c) };
        if c >> i & 1 == 1 {
            low.map(|l| format!("({x}[{i}] & {l})"))
        } else {
            Some(match low {
                Some(l) => format!("({x}[{i}] | {l})"),
                None => format!("{x}[{i}]"),
            })
        }
    }
    if c >> n != 0 {
        return "1'b0".into();
    }
    rec(x, n - 1, c).unwrap_or_else(|| "1'b0".into())
}

/// Appends to `v` the Verilog that adds groups of [`ck_group`] masked words `w{i}` into
/// the slots of `gs` (balanced, zero-extended).
fn group_sums(v: &mut String, kw: usize) {
    let g = ck_group(kw);
    let (nw, sw) = (kw / 2, 16 * g);
    let vb = 16 + g.trailing_zeros() as usize;
    for s in 0..nw / g {
        let mut terms: Vec<String> = (0..g)
            .map(|i| format!("{{{}'d0, w{}}}", vb - 16, s * g + i))
            .map(|t| {
                if vb == 16 {
                    t.replace("{0'd0, ", "{")
                } else {
                    t
                }
            })
            .collect();
        let mut lvl = 0;
        while terms.len() > 1 {
            let mut next = Vec::new();
            for (i, p) in terms.chunks(2).enumerate() {
                let n = format!("g{s}_{lvl}_{i}");
                v.push_str(&format!("wire [{}:0] {n} = {} + {};\n", vb - 1, p[0], p[1]));
                next.push(n);
            }
            terms = next;
            lvl += 1;
        }
        let lo = s * sw;
        v.push_str(&format!(
            "assign gs[{}:{lo}] = {};\n",
            lo + vb - 1,
            terms[0]
        ));
        if sw > vb {
            v.push_str(&format!(
                "assign gs[{}:{}] = {}'d0;\n",
                lo + sw - 1,
                lo + vb,
                sw - vb
            ));
        }
    }
}

/// The native counterpart of [`group_sums`]: `words` (masked, big-endian values) added in
/// groups into the slots of a `DW`-bit word.
fn group_sums_native<const DW: usize>(words: &[u64]) -> Bits<DW> {
    let g = ck_group(DW / 8);
    let mut out = Bits::<DW>::default();
    for (s, grp) in words.chunks(g).enumerate() {
        let sum: u64 = grp.iter().sum();
        out = out | (bit_cast::<DW, 32>(sum.into()) << bits::<16>((s * 16 * g) as u64));
    }
    out
}

/// The UDP byte mask of one beat: every byte inside `[34, 34 + udp_len)`. The UDP length
/// (bytes 38..39) is read from the beat that holds it (`bu = 38 / KW`; the bytes from 34 on
/// in that beat are masked against it directly); for every later beat the mask was
/// registered a beat ahead (`um`, from `ur`, the UDP bytes left at the start of the beat).
/// Beats before `bu` hold no byte from 34 on. The mask is registered and applied to the
/// registered beat by [`MaskSum`] (the compare against the length is three LUT levels).
#[derive(LogicBlock, Default)]
pub struct UdpMask<const DW: usize, const KW: usize> {
    /// The beat (byte 0 in bits 7:0).
    pub tdata: Signal<In, Bits<DW>>,
    /// One-hot beat index.
    pub bo: Signal<In, Bits<16>>,
    /// UDP bytes of this beat (when past beat `bu`).
    pub um: Signal<In, Bits<KW>>,
    /// UDP bytes left from the start of this beat (when past beat `bu`; 17-bit signed).
    pub ur: Signal<In, Bits<17>>,
    /// This beat's UDP bytes (bit `j`: byte `j`).
    pub mk: Signal<Out, Bits<KW>>,
    /// `um` of the next beat.
    pub um_n: Signal<Out, Bits<KW>>,
    /// `ur` of the next beat.
    pub ur_n: Signal<Out, Bits<17>>,
}

impl<const DW: usize, const KW: usize> UdpMask<DW, KW> {
    /// (bu, c): the beat holding the UDP length and `(bu + 1)·KW - 34`, the bytes of
    /// that beat from 34 on (`ur` of the next beat is `udp_len - c`).
    fn params() -> (usize, usize) {
        let bu = 38 / KW;
        let c = (bu + 1) * KW - 34;
        assert!(c <= 32, "UDP bytes of the length beat: {c}");
        (bu, c)
    }
}

impl<const DW: usize, const KW: usize> Logic for UdpMask<DW, KW> {
    fn update(&mut self) {
        let (bu, c) = Self::params();
        let bo = self.bo.val().index();
        let cur = bo >> bu & 1 == 1;
        let past = bo & ((1 << (bu + 1)) - 1) == 0;
        let td = self.tdata.val();
        let byte = |j: usize| td.get_bits::<8>(8 * j).index();
        let ulen = byte(38 - bu * KW) << 8 | byte(39 - bu * KW);
        let um = self.um.val();
        let ur = self.ur.val().index();
        let (urneg, urlo) = (ur >> 16 & 1 == 1, ur & 0xffff);
        let mut mk = Bits::<KW>::default();
        let mut un = Bits::<KW>::default();
        for j in 0..KW {
            let ob = bu * KW + j;
            mk = mk.replace_bit(
                j,
                (cur && ob >= 34 && ulen > ob - 34) || (past && um.get_bit(j)),
            );
            let b = if cur {
                ulen > c + j
            } else {
                !urneg && urlo > KW + j
            };
            un = un.replace_bit(j, b);
        }
        self.mk.next = mk;
        self.um_n.next = un;
        let urn = if cur {
            (ulen as u64).wrapping_sub(c as u64)
        } else {
            (ur as u64).wrapping_sub(KW as u64)
        };
        self.ur_n.next = (urn & 0x1_ffff).into();
    }
    fn connect(&mut self) {
        self.mk.connect();
        self.um_n.connect();
        self.ur_n.connect();
    }
    fn hdl(&self) -> Verilog {
        let (bu, c) = Self::params();
        let kw = KW;
        let (b38, b39) = (8 * (38 - bu * kw), 8 * (39 - bu * kw));
        let mut v = format!(
            "wire [15:0] ulen = {{tdata[{h38}:{b38}], tdata[{h39}:{b39}]}};\n\
             wire cur = bo[{bu}];\n\
             wire past = ~|bo[{bu}:0];\n\
             wire [4:0] ulo = ulen[4:0];\n\
             wire chi = cur & (|ulen[15:5]);\n",
            h38 = b38 + 7,
            h39 = b39 + 7
        );
        for j in 0..kw {
            let ob = bu * kw + j;
            let same = if ob >= 34 {
                // `ulen > ob - 34` with `ob - 34 < c <= 32`: the high bits or the low five.
                format!("chi | (cur & {}) | ", gt_const("ulo", 5, ob - 34))
            } else {
                String::new()
            };
            v.push_str(&format!(
                "assign mk[{j}] = {same}(past & um[{j}]);\n\
                 assign um_n[{j}] = cur ? {cj} : (~ur[16] & {kj});\n",
                cj = gt_const("ulen", 16, c + j),
                kj = gt_const("ur", 16, kw + j)
            ));
        }
        v.push_str(&format!(
            "assign ur_n = cur ? ({{1'b0, ulen}} - 17'd{c}) : (ur - 17'd{kw});\n"
        ));
        Verilog::Custom(v)
    }
}

/// The checksum share of a beat (UDP or IPv4): its big-endian 16-bit words with every byte outside
/// the mask zeroed, added in groups of [`ck_group`] words (one slot each; [`CkTotal`] adds
/// the slots a cycle later).
#[derive(LogicBlock, Default)]
pub struct MaskSum<const DW: usize, const KW: usize> {
    /// The beat (byte 0 in bits 7:0).
    pub td: Signal<In, Bits<DW>>,
    /// The byte mask (bit `j`: byte `j`).
    pub mk: Signal<In, Bits<KW>>,
    /// Group sums of the masked words.
    pub gs: Signal<Out, Bits<DW>>,
}

impl<const DW: usize, const KW: usize> Logic for MaskSum<DW, KW> {
    fn update(&mut self) {
        let (td, mk) = (self.td.val(), self.mk.val());
        let byte = |j: usize| {
            if mk.get_bit(j) {
                td.get_bits::<8>(8 * j).index() as u64
            } else {
                0
            }
        };
        let words: Vec<u64> = (0..KW / 2)
            .map(|w| byte(2 * w) << 8 | byte(2 * w + 1))
            .collect();
        self.gs.next = group_sums_native::<DW>(&words);
    }
    fn connect(&mut self) {
        self.gs.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut v = String::new();
        for j in 0..KW {
            v.push_str(&format!(
                "wire [7:0] b{j} = mk[{j}] ? td[{h}:{l}] : 8'd0;\n",
                h = 8 * j + 7,
                l = 8 * j
            ));
        }
        for w in 0..KW / 2 {
            v.push_str(&format!(
                "wire [15:0] w{w} = {{b{}, b{}}};\n",
                2 * w,
                2 * w + 1
            ));
        }
        group_sums(&mut v, KW);
        Verilog::Custom(v)
    }
}

/// One flag per descriptor-FIFO entry, written by address and read combinationally: the
/// UDP checksum verdicts, which are ready a cycle after the rest of the descriptor.
#[derive(LogicBlock, Default)]
pub struct OkFlags {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Write `wd` at `waddr`.
    pub we: Signal<In, bool>,
    /// Write address (the low bits index the [`DESC_DEPTH`] entries).
    pub waddr: Signal<In, Bits<4>>,
    /// Write data.
    pub wd: Signal<In, bool>,
    /// Read address.
    pub raddr: Signal<In, Bits<4>>,
    /// The flag at `raddr`.
    pub rd: Signal<Out, bool>,
    /// The flags (native model; a register in the Verilog).
    f: Signal<Local, Bits<DESC_DEPTH>>,
}

impl Logic for OkFlags {
    fn update(&mut self) {
        let m = DESC_DEPTH - 1;
        if self.clock.pos_edge() && self.we.val() {
            self.f.next = self
                .f
                .val()
                .replace_bit(self.waddr.val().index() & m, self.wd.val());
        }
        self.rd.next = self.f.val().get_bit(self.raddr.val().index() & m);
    }
    fn connect(&mut self) {
        self.rd.connect();
        self.f.connect();
    }
    fn hdl(&self) -> Verilog {
        let ab = DESC_DEPTH.trailing_zeros() as usize;
        // One write enable per flag, decoded from the address: `f[waddr] <= wd` becomes a
        // shifter with a subtractor in yosys (6 LUT levels on `alveo`).
        let writes: String = (0..DESC_DEPTH)
            .map(|i| {
                format!(
                    "    if (we && waddr[{h}:0] == {ab}'d{i}) f[{i}] <= wd;\n",
                    h = ab - 1
                )
            })
            .collect();
        Verilog::Custom(format!(
            "initial begin\n    f = {DESC_DEPTH}'h0;\nend\n\n\
             always @(posedge clock) begin\n{writes}end\n\n\
             assign rd = f[raddr[{h}:0]];\n",
            h = ab - 1
        ))
    }
    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "flags".into(),
            clock: "clock".into(),
            inputs: vec!["we".into(), "waddr".into(), "wd".into()],
            outputs: vec![],
        }]
    }
}

/// First byte of the IPv4 header (after the 14-byte Ethernet header).
const IP_FIRST: usize = 14;
/// One past the last byte of the longest IPv4 header (IHL 15).
const IP_LAST: usize = IP_FIRST + 60;

/// Whether the word at byte offset `o` lies in an IPv4 header of IHL `ihl`:
/// `14 <= o < 14 + 4·ihl`, i.e. `ihl > (o - 14) / 4` (`None`: never).
fn ip_word_min(o: usize) -> Option<usize> {
    (IP_FIRST..IP_LAST).contains(&o).then(|| (o - IP_FIRST) / 4)
}

/// The IPv4 header byte mask of one beat: the bytes of `[14, 14 + 4·IHL)` (applied and
/// summed a cycle later by [`MaskSum`]). IHL is the low nibble of
/// byte 14: in the beat that holds it (`b14 = 14 / KW`) the words are masked against it
/// directly; for every later beat the word mask was registered a beat ahead (`im`, from
/// the capture's or this beat's byte 14 and the one-hot beat index). A beat before `b14`
/// has no word in the range.
#[derive(LogicBlock, Default)]
pub struct IpMask<const DW: usize, const KW: usize> {
    /// The beat (byte 0 in bits 7:0).
    pub tdata: Signal<In, Bits<DW>>,
    /// One-hot beat index.
    pub bo: Signal<In, Bits<16>>,
    /// Capture of the earlier beats.
    pub hdr: Signal<In, Bits<PARSE_W>>,
    /// Header words of this beat (when past beat `b14`).
    pub im: Signal<In, Bits<32>>,
    /// This beat's IPv4-header bytes (bit `j`: byte `j`; at most 60 in a frame, so their
    /// words add up to at most 30 · 0xffff).
    pub mk: Signal<Out, Bits<KW>>,
    /// `im` of the next beat.
    pub im_n: Signal<Out, Bits<32>>,
}

impl<const DW: usize, const KW: usize> Logic for IpMask<DW, KW> {
    fn update(&mut self) {
        let kw = KW;
        let (b14, cb) = (IP_FIRST / kw, cap_beats(DW));
        let bo = self.bo.val().index();
        let cur = bo >> b14 & 1 == 1;
        let td = self.tdata.val();
        let tdi = td.get_bits::<4>(8 * (IP_FIRST % kw)).index();
        let hdi = self.hdr.val().get_bits::<4>(8 * IP_FIRST).index();
        let ihn = if cur { tdi } else { hdi };
        let im = self.im.val().index();
        let mut mk = Bits::<KW>::default();
        for w in 0..kw / 2 {
            let same = ip_word_min(b14 * kw + 2 * w).is_some_and(|c| cur && tdi > c);
            let m = same || im >> w & 1 == 1;
            mk = mk.replace_bit(2 * w, m).replace_bit(2 * w + 1, m);
        }
        self.mk.next = mk;
        let mut imn = 0u64;
        for w in 0..kw / 2 {
            for b in b14..cb.saturating_sub(1) {
                if let Some(c) = ip_word_min((b + 1) * kw + 2 * w) {
                    if bo >> b & 1 == 1 && ihn > c {
                        imn |= 1 << w;
                    }
                }
            }
        }
        self.im_n.next = imn.into();
    }
    fn connect(&mut self) {
        self.mk.connect();
        self.im_n.connect();
    }
    fn hdl(&self) -> Verilog {
        let kw = KW;
        let (b14, cb) = (IP_FIRST / kw, cap_beats(DW));
        let l14 = 8 * (IP_FIRST % kw);
        let h14 = 8 * IP_FIRST;
        let mut v = format!(
            "wire [3:0] tdi = tdata[{h}:{l14}];\n\
             wire [3:0] hdi = hdr[{hh}:{h14}];\n\
             wire cur = bo[{b14}];\n\
             wire [3:0] ihn = cur ? tdi : hdi;\n",
            h = l14 + 3,
            hh = h14 + 3
        );
        for w in 0..kw / 2 {
            let same = match ip_word_min(b14 * kw + 2 * w) {
                Some(c) => format!("(cur & {}) | ", gt_const("tdi", 4, c)),
                None => String::new(),
            };
            let nexts: Vec<String> = (b14..cb.saturating_sub(1))
                .filter_map(|b| {
                    ip_word_min((b + 1) * kw + 2 * w)
                        .map(|c| format!("(bo[{b}] & {})", gt_const("ihn", 4, c)))
                })
                .collect();
            let nexts = if nexts.is_empty() {
                "1'b0".to_string()
            } else {
                nexts.join(" | ")
            };
            v.push_str(&format!(
                "wire m{w} = {same}im[{w}];\n\
                 assign mk[{b}:{a}] = {{2{{m{w}}}}};\n\
                 assign im_n[{w}] = {nexts};\n",
                a = 2 * w,
                b = 2 * w + 1
            ));
        }
        if kw / 2 < 32 {
            v.push_str(&format!(
                "assign im_n[31:{}] = {}'d0;\n",
                kw / 2,
                32 - kw / 2
            ));
        }
        Verilog::Custom(v)
    }
}

/// Byte offsets of the big-endian words the UDP pseudo header adds to the sum: the UDP
/// length (38), then the IPv4 source and destination addresses (26..33). The protocol
/// (17, UDP) is the constant beside them.
const PSEUDO_WORDS: [usize; 5] = [38, 26, 28, 30, 32];

/// The UDP pseudo header's share of the checksum sum: 17 plus the words at
/// [`PSEUDO_WORDS`] of the capture (at most 17 + 5 · 0xffff, 19 bits). The port registers
/// it with the descriptor, so that [`CkTotal`] adds one operand instead of six.
#[derive(LogicBlock, Default)]
pub struct PseudoSum {
    /// The capture.
    pub hdr: Signal<In, Bits<PARSE_W>>,
    /// The sum (zero-extended).
    pub s: Signal<Out, Bits<32>>,
}

impl Logic for PseudoSum {
    fn update(&mut self) {
        let h = self.hdr.val();
        let w = |o: usize| {
            (h.get_bits::<8>(8 * o).index() << 8 | h.get_bits::<8>(8 * o + 8).index()) as u64
        };
        self.s.next = (17 + PSEUDO_WORDS.iter().map(|&o| w(o)).sum::<u64>()).into();
    }
    fn connect(&mut self) {
        self.s.connect();
    }
    fn hdl(&self) -> Verilog {
        let w: Vec<String> = PSEUDO_WORDS
            .iter()
            .map(|&o| {
                format!(
                    "{{16'd0, hdr[{}:{}], hdr[{}:{}]}}",
                    8 * o + 7,
                    8 * o,
                    8 * o + 15,
                    8 * o + 8
                )
            })
            .collect();
        Verilog::Custom(format!(
            "assign s = (({} + 32'd17) + ({} + {})) + ({} + {});\n",
            w[0], w[1], w[2], w[3], w[4]
        ))
    }
}

/// The checksum totals of a beat a cycle after its masking: the slots of the masked beat
/// ([`ck_group`] words per slot, at most 8) added in a balanced tree, plus the sum of the
/// earlier beats (`acc`, unless this is a first beat): `tot`; and `ptot`, the same plus
/// `psh` (the registered [`PseudoSum`]), for the total of a frame's last beat.
#[derive(LogicBlock, Default)]
pub struct CkTotal<const DW: usize> {
    /// The group sums of the masked beat.
    pub tw: Signal<In, Bits<DW>>,
    /// The sum of the frame's earlier beats.
    pub acc: Signal<In, Bits<32>>,
    /// The beat is a first beat (`acc` is not added).
    pub first: Signal<In, bool>,
    /// The UDP pseudo header's sum (a register).
    pub psh: Signal<In, Bits<32>>,
    /// The sum so far (not folded).
    pub tot: Signal<Out, Bits<32>>,
    /// `tot` plus `psh`.
    pub ptot: Signal<Out, Bits<32>>,
}

impl<const DW: usize> Logic for CkTotal<DW> {
    fn update(&mut self) {
        let g = ck_group(DW / 8);
        let mut s = 0u64;
        for i in 0..DW / 16 / g {
            s += self.tw.val().get_bits::<32>(16 * g * i).index() as u64
                & ((1 << (16 + g.trailing_zeros())) - 1);
        }
        if !self.first.val() {
            s += self.acc.val().index() as u64;
        }
        let p = self.psh.val().index() as u64;
        self.tot.next = (s & 0xffff_ffff).into();
        self.ptot.next = ((s + p) & 0xffff_ffff).into();
    }
    fn connect(&mut self) {
        self.tot.connect();
        self.ptot.connect();
    }
    fn hdl(&self) -> Verilog {
        let g = ck_group(DW / 8);
        let vb = 16 + g.trailing_zeros() as usize;
        let mut v = String::new();
        let mut terms = Vec::new();
        for i in 0..DW / 16 / g {
            let lo = 16 * g * i;
            v.push_str(&format!(
                "wire [31:0] t{i} = {{{}'d0, tw[{}:{lo}]}};\n",
                32 - vb,
                lo + vb - 1
            ));
            terms.push(format!("t{i}"));
        }
        // `ptot` pairs the slots differently from `tot`, so that the two trees share no
        // adder (a shared one would be a separate multi-operand adder in series).
        let n = terms.len();
        let order: Vec<usize> = (0..n).step_by(2).chain((1..n).step_by(2)).collect();
        let tree = |ts: Vec<String>| -> String {
            let mut ts = ts;
            while ts.len() > 1 {
                ts = ts
                    .chunks(2)
                    .map(|p| match p {
                        [x, y] => format!("({x} + {y})"),
                        _ => p[0].clone(),
                    })
                    .collect();
            }
            ts.remove(0)
        };
        v.push_str(&format!(
            "wire [31:0] base = first ? 32'd0 : acc;\n\
             assign tot = base + {st};\n\
             assign ptot = (base + {sp}) + psh;\n",
            st = tree(terms.clone()),
            sp = tree(order.iter().map(|&i| terms[i].clone()).collect()),
        ));
        Verilog::Custom(v)
    }
}

/// `WB / DW` copies of a beat side by side (each gearbox chunk of the row buffer takes
/// its own; the chunk enables pick the one written).
#[derive(LogicBlock, Default)]
pub struct Repeat<const DW: usize, const WB: usize> {
    /// The beat.
    pub a: Signal<In, Bits<DW>>,
    /// The copies.
    pub y: Signal<Out, Bits<WB>>,
}

impl<const DW: usize, const WB: usize> Logic for Repeat<DW, WB> {
    fn update(&mut self) {
        let mut y = Bits::<WB>::default();
        for c in 0..WB / DW {
            y = y | (bit_cast::<WB, DW>(self.a.val()) << bits::<16>((c * DW) as u64));
        }
        self.y.next = y;
    }
    fn connect(&mut self) {
        self.y.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!("assign y = {{{}{{a}}}};\n", WB / DW))
    }
}
