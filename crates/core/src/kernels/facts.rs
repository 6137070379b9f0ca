//! What the JavaScript side needs to know of a kernel, said once, by the
//! kernel: its kind, its codec family, the least input it takes, whether
//! its stream may run in blocks, the node:zlib dialect its parameters are
//! given in. The binding reports the table
//! (`kernelTable()`, src/lib.rs); lib/addon/binding.js reads it, so that
//! no file of lib/ lists kernels by name.

/// What a kernel is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A digest: its output comes at the end, its size fixed by its
    /// parameters; small inputs may share a task (`postMany()`'s packing)
    /// and `createHash()` takes it.
    Hash,
    /// A codec's encoder or decoder: a codec stream takes it.
    Codec,
    /// For tests and benchmarks (`spin`, `sleep`, `panic`, `echo`): not
    /// named among the kernels an unknown name's error suggests.
    Test,
    /// A key derivation (`pbkdf2`, `scrypt`, `hkdf`): its input is a
    /// secret, its output a key of the length its parameters ask for.
    Kdf,
    /// Anything else (a loaded library's).
    Other,
}

impl Kind {
    /// The name the table says it with.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Hash => "hash",
            Kind::Codec => "codec",
            Kind::Test => "test",
            Kind::Kdf => "kdf",
            Kind::Other => "other",
        }
    }
}

/// The codec family a kernel belongs to: the flush kinds its stream takes
/// and the dialect its parameters are read in (node:zlib's, for the
/// deflate, brotli and zstd families).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    None,
    /// gzip, deflate, deflateRaw and their decoders, unzip.
    Deflate,
    Brotli,
    Zstd,
    Lz4,
}

impl Family {
    /// The name the table says it with ("" for none).
    pub fn name(self) -> &'static str {
        match self {
            Family::None => "",
            Family::Deflate => "deflate",
            Family::Brotli => "brotli",
            Family::Zstd => "zstd",
            Family::Lz4 => "lz4",
        }
    }

    /// The flush kinds a stream of the family takes from `flush()` (0, no
    /// flush, first: it reaches no kernel), and the one it takes by default (node:zlib's for its families:
    /// Z_FULL_FLUSH, BROTLI_OPERATION_FLUSH, ZSTD_e_flush). Finishing kinds
    /// are the end's, not a flush's.
    pub fn flushes(self) -> (&'static [u32], u32) {
        match self {
            Family::None => (&[], 0),
            // Z_NO_FLUSH, Z_PARTIAL_FLUSH, Z_SYNC_FLUSH, Z_FULL_FLUSH, Z_BLOCK.
            Family::Deflate => (&[0, 1, 2, 3, 5], 3),
            Family::Brotli | Family::Zstd | Family::Lz4 => (&[0, 1], 1),
        }
    }
}

/// How node:zlib's options name a codec's parameters: the options a codec
/// stream takes beside `params`, as node:zlib's constructors take them
/// (`createGzip({ level: 9 })`), and the numeric keys of node:zlib's
/// constants its `params` may be keyed by (`{ [BROTLI_PARAM_QUALITY]: 4 }`),
/// each with the parameter it stands for. A key node:zlib has that is not
/// here is refused by lib/codecs/ with ERR_TIDEPOOL_ZLIB_UNSUPPORTED.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dialect {
    pub names: &'static [&'static str],
    pub keyed: &'static [(u32, &'static str)],
}

impl Dialect {
    /// No option of node:zlib's: the parameters go by their own names.
    pub const NONE: Dialect = Dialect { names: &[], keyed: &[] };
}

/// Whether several small inputs of one batch may run as one task (a
/// packed task, [`crate::Mode::Packed`]) and how its outputs are told
/// apart again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packing {
    /// One input a task (a decoder's output may be large; a loaded
    /// kernel's is unknown).
    None,
    /// Outputs of one length (a hash's digests), split by that length.
    Equal,
    /// Small outputs of their own lengths (a compressor's), each length
    /// told after them ([`crate::Packed::sized`]).
    Sized,
}

impl Packing {
    /// The name the table says it with ("" for none).
    pub fn name(self) -> &'static str {
        match self {
            Packing::None => "",
            Packing::Equal => "equal",
            Packing::Sized => "sized",
        }
    }
}

/// What a kernel says of itself (see the module's comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    pub kind: Kind,
    pub family: Family,
    /// The fewest input bytes a task takes (a duration's four for `spin`
    /// and `sleep`; 0 for every other).
    pub min_input: usize,
    /// A compressor whose stream the pool may run in blocks on idle
    /// threads (kernels::zlib::block_stream), its output handed on from
    /// the calling thread.
    pub in_blocks: bool,
    pub dialect: Dialect,
    pub packing: Packing,
}

impl Facts {
    /// A kernel that says nothing of itself.
    pub const OTHER: Facts = Facts {
        kind: Kind::Other,
        family: Family::None,
        min_input: 0,
        in_blocks: false,
        dialect: Dialect::NONE,
        packing: Packing::None,
    };
    pub const HASH: Facts = Facts { kind: Kind::Hash, packing: Packing::Equal, ..Facts::OTHER };
    pub const TEST: Facts = Facts { kind: Kind::Test, ..Facts::OTHER };
    pub const KDF: Facts = Facts { kind: Kind::Kdf, ..Facts::OTHER };

    /// An encoder or decoder of `family`, its parameters given in `dialect`.
    pub const fn codec(family: Family, dialect: Dialect) -> Facts {
        Facts { kind: Kind::Codec, family, dialect, ..Facts::OTHER }
    }

    /// The table's line for kernel `name`: its fields tab-separated, in
    /// the order lib/addon/binding.js reads them.
    pub fn line(&self, name: &str) -> String {
        let (kinds, fallback) = self.family.flushes();
        let kinds = kinds.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
        let names = self.dialect.names.join(",");
        let keyed = self.dialect.keyed.iter().map(|(key, name)| format!("{key}={name}"));
        let keyed = keyed.collect::<Vec<_>>().join(",");
        format!(
            "{name}\t{}\t{}\t{}\t{}\t{kinds}\t{fallback}\t{names}\t{keyed}\t{}",
            self.kind.name(),
            self.family.name(),
            self.min_input,
            u8::from(self.in_blocks),
            self.packing.name(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::{all, RunContext, Sink};
    use std::sync::atomic::AtomicBool;

    #[test]
    fn a_line_says_every_fact_in_order() {
        let dialect =
            Dialect { names: &["level", "memLevel"], keyed: &[(1, "quality"), (2, "lgwin")] };
        let facts = Facts { min_input: 4, ..Facts::codec(Family::Deflate, dialect) };
        assert_eq!(
            facts.line("gzip"),
            "gzip\tcodec\tdeflate\t4\t0\t0,1,2,3,5\t3\tlevel,memLevel\t1=quality,2=lgwin\t"
        );
        assert_eq!(Facts::OTHER.line("x/y"), "x/y\tother\t\t0\t0\t\t0\t\t\t");
        assert!(Facts::HASH.line("h").ends_with("\tequal"));
    }

    #[test]
    fn every_codec_stream_takes_its_familys_flush_kinds() {
        let cancel = AtomicBool::new(false);
        let ctx = RunContext::new(&cancel);
        let raw = crate::kernels::RawParams::default();
        let mut codecs = 0;
        for kernel in all() {
            let facts = kernel.facts();
            assert_eq!(
                facts.kind == Kind::Codec,
                facts.family != Family::None,
                "{}",
                kernel.name()
            );
            if facts.kind != Kind::Codec {
                continue;
            }
            codecs += 1;
            let params = kernel.params(&raw).unwrap();
            let (kinds, fallback) = facts.family.flushes();
            assert!(kinds.contains(&fallback), "{}", kernel.name());
            // Kind 0 (no flush) only waits for the writes before it: a
            // chunk that ends with it ends as any other, no flush called.
            assert_eq!(kinds[0], 0, "{}", kernel.name());
            for &kind in &kinds[1..] {
                let mut state = kernel.start(&params, None).unwrap();
                let mut out = Sink::new(usize::MAX);
                // An encoder flushes what it was given; a decoder, nothing yet.
                if !kernel.expands() {
                    state.update(b"abc", &mut out, &ctx).unwrap();
                }
                assert!(
                    state.flush(kind, &mut out, &ctx).is_ok(),
                    "{} refused flush kind {kind}",
                    kernel.name()
                );
            }
        }
        assert_eq!(codecs, 13);
    }

    #[test]
    fn only_the_timed_kernels_need_input_and_only_deflaters_run_in_blocks() {
        for kernel in all() {
            let facts = kernel.facts();
            let test = matches!(kernel.name(), "spin" | "sleep" | "panic" | "echo");
            assert_eq!(facts.kind == Kind::Test, test, "{}", kernel.name());
            let timed = matches!(kernel.name(), "spin" | "sleep");
            assert_eq!(facts.min_input, if timed { 4 } else { 0 }, "{}", kernel.name());
            let blocks = matches!(kernel.name(), "gzip" | "deflate" | "deflateRaw");
            assert_eq!(facts.in_blocks, blocks, "{}", kernel.name());
        }
    }

    #[test]
    fn every_name_of_a_dialect_is_a_parameter_of_its_kernel() {
        use crate::kernels::{ParamError, RawParams, RawValue};
        let mut named = 0;
        for kernel in all() {
            let dialect = kernel.facts().dialect;
            let keyed = dialect.keyed.iter().map(|(_, name)| *name);
            for name in dialect.names.iter().copied().chain(keyed) {
                named += 1;
                // node:zlib's createGzip() takes a dictionary and ignores
                // it; the pool's refuses it by its name, as the kernel's.
                if kernel.name() == "gzip" && name == "dictionary" {
                    continue;
                }
                let raw = RawParams::new(vec![(name, RawValue::Other("object"))]);
                let refused = kernel.params(&raw).err();
                assert!(
                    !matches!(refused, Some(ParamError::Unknown { .. })),
                    "{} does not take its dialect's {name}",
                    kernel.name()
                );
            }
            let mut keys = dialect.keyed.iter().map(|(key, _)| key).collect::<Vec<_>>();
            keys.dedup();
            assert_eq!(keys.len(), dialect.keyed.len(), "{}: a key twice", kernel.name());
        }
        assert!(named > 20, "the codecs' dialects were seen ({named} names)");
    }

    #[test]
    fn only_hashes_pack_equal_and_only_compressors_pack_sized() {
        let mut sized = Vec::new();
        for kernel in all() {
            let facts = kernel.facts();
            assert_eq!(
                facts.packing == Packing::Equal,
                facts.kind == Kind::Hash,
                "{}",
                kernel.name()
            );
            if facts.packing == Packing::Sized {
                // A task's outputs are held until its last input ends:
                // never a decoder's, whose output may be large.
                assert!(!kernel.expands(), "{}", kernel.name());
                sized.push(kernel.name());
            }
        }
        sized.sort_unstable();
        let want =
            ["brotliCompress", "deflate", "deflateRaw", "gzip", "lz4Compress", "zstdCompress"];
        assert_eq!(sized, want);
    }
}
