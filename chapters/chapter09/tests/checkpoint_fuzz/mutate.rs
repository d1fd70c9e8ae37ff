//! Broken copies of a valid safetensors file: the [`Mutation`]s the checkpoint tests
//! feed the readers, and how each one is applied to the file's bytes.
//!
//! The file is `[8-byte little-endian header length][JSON header][tensor data]`; the
//! header maps each tensor's name to `{"dtype", "shape", "data_offsets"}` and
//! `__metadata__` to a map of strings, here one entry holding the run's JSON.

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Map, Value, json};

/// A file split into its header (as JSON) and its data.
#[derive(Clone, Debug)]
pub struct Parts {
    /// The JSON header.
    pub header: Map<String, Value>,
    /// Everything after the header.
    pub data: Vec<u8>,
}

impl Parts {
    /// Splits a valid file.
    pub fn of(bytes: &[u8]) -> Parts {
        let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
        let header = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
        Parts {
            header,
            data: bytes[8 + n..].to_vec(),
        }
    }

    /// The file again: the header's length, the header, the data.
    pub fn bytes(&self) -> Vec<u8> {
        let header = serde_json::to_vec(&self.header).unwrap();
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(&header);
        out.extend_from_slice(&self.data);
        out
    }

    /// The tensors' names in the order of their data.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<(u64, String)> = self
            .header
            .iter()
            .filter(|(n, _)| *n != "__metadata__")
            .map(|(n, info)| (info["data_offsets"][0].as_u64().unwrap(), n.clone()))
            .collect();
        names.sort();
        names.into_iter().map(|(_, n)| n).collect()
    }

    fn offsets(&self, name: &str) -> (usize, usize) {
        let o = &self.header[name]["data_offsets"];
        (
            o[0].as_u64().unwrap() as usize,
            o[1].as_u64().unwrap() as usize,
        )
    }

    fn shape(&self, name: &str) -> Vec<usize> {
        self.header[name]["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap() as usize)
            .collect()
    }

    /// Each tensor's entry and bytes, in data order.
    fn tensors(&self) -> Vec<(String, Value, Vec<u8>)> {
        self.names()
            .into_iter()
            .map(|n| {
                let (s, e) = self.offsets(&n);
                (n.clone(), self.header[&n].clone(), self.data[s..e].to_vec())
            })
            .collect()
    }

    /// Rebuilds header offsets and data from `tensors`, so that the file is well-formed
    /// again whatever was added or taken away.
    fn repack(&mut self, tensors: Vec<(String, Value, Vec<u8>)>) {
        self.header.retain(|n, _| n == "__metadata__");
        self.data.clear();
        for (name, mut info, bytes) in tensors {
            let start = self.data.len();
            self.data.extend_from_slice(&bytes);
            info["data_offsets"] = json!([start, self.data.len()]);
            self.header.insert(name, info);
        }
    }
}

/// Where to cut a file, near a place where a reader changes what it reads.
#[derive(Clone, Copy, Debug)]
pub enum Boundary {
    /// Inside the 8-byte length.
    Start,
    /// Around the end of the JSON header.
    HeaderEnd,
    /// Just before the end of the data.
    End,
}

/// How a tensor's `data_offsets` lie.
#[derive(Clone, Debug)]
pub enum OffsetLie {
    /// The end moved past the data by this much.
    PastEnd(u64),
    /// `[end, start]`.
    Reversed,
    /// Another tensor's offsets.
    Overlap(Index),
    /// Anything.
    Absurd(u64, u64),
}

/// How a tensor's `shape` lies.
#[derive(Clone, Debug)]
pub enum ShapeLie {
    /// Any small shape (its byte length will mostly disagree).
    Any(Vec<usize>),
    /// A shape whose element count overflows a `usize`.
    Overflow,
    /// No elements, but dimensions that would be huge otherwise.
    ZeroAndHuge,
    /// The same number of elements in another arrangement: flattened, transposed, with
    /// a 1 added in front or at the back.
    Rearranged(u8),
}

/// How the run's metadata lies.
#[derive(Clone, Debug)]
pub enum MetaLie {
    /// No metadata at all.
    Remove,
    /// The run's entry under another key.
    OtherKey,
    /// The run's entry replaced by this text (not JSON, mostly).
    Text(String),
    /// The run's JSON cut short.
    Truncated(Index),
    /// One field (a JSON pointer, chosen among the entry's fields) removed.
    RemoveField(Index),
    /// One field set to this JSON value.
    SetField(Index, String),
    /// The field at this JSON pointer set to this JSON value.
    SetPointer(String, String),
    /// An extra field.
    ExtraField,
    /// The metadata's value a number instead of a string.
    NotAString,
}

/// One way to break (or, sometimes, harmlessly change) a valid file.
#[derive(Clone, Debug)]
pub enum Mutation {
    /// Cut the file at any point.
    Truncate(Index),
    /// Cut the file near a boundary, this many bytes from it.
    TruncateNear(Boundary, i8),
    /// Flip one bit anywhere.
    FlipBit(Index, u8),
    /// Flip one bit of the 8-byte header length.
    FlipLengthBit(u8),
    /// Flip one bit of the JSON header.
    FlipHeaderBit(Index, u8),
    /// Declare this header length.
    SetLength(u64),
    /// Overwrite bytes somewhere with these.
    Overwrite(Index, Vec<u8>),
    /// A file of random bytes, maybe starting with a plausible length.
    Random(Option<u64>, Vec<u8>),
    /// Lie about one tensor's offsets.
    Offsets(Index, OffsetLie),
    /// Lie about one tensor's shape.
    Shape(Index, ShapeLie),
    /// Give one tensor another dtype, keeping its shape or (`true`) adjusting the shape
    /// so that the byte length still agrees.
    Dtype(Index, &'static str, bool),
    /// Replace one tensor's header entry by this JSON.
    Entry(Index, String),
    /// Rename one tensor.
    Rename(Index, String),
    /// Take one tensor out: leaving a hole in the data, or (`true`) repacked.
    Drop(Index, bool),
    /// Add a well-formed tensor with this name and shape.
    Extra(String, Vec<usize>),
    /// Lie in the metadata.
    Meta(MetaLie),
    /// Set one f32 of the data to these bits (NaN and infinities included): the file
    /// stays valid.
    Value(Index, u32),
}

/// The header lengths worth declaring besides random ones.
const LENGTHS: [u64; 8] = [
    0,
    1,
    7,
    100_000_000,
    100_000_001,
    u32::MAX as u64,
    1 << 63,
    u64::MAX,
];

/// The dtypes safetensors knows, besides F32.
const DTYPES: [&str; 10] = [
    "F64", "F16", "BF16", "I64", "I32", "I16", "I8", "U8", "BOOL", "F8_E4M3",
];

/// Values a lying metadata field takes.
const FIELD_VALUES: [&str; 16] = [
    "0",
    "1",
    "-1",
    "2",
    "65536",
    "4294967296",
    "1099511627776",
    "18446744073709551615",
    "18446744073709551616",
    "1e300",
    "0.5",
    "null",
    "true",
    "\"x\"",
    "[]",
    "{}",
];

fn field_value() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(FIELD_VALUES.to_vec()).prop_map(String::from),
        any::<i64>().prop_map(|v| v.to_string()),
        prop::collection::vec(0u32..3, 0..5).prop_map(|v| format!("{v:?}")),
    ]
}

fn tensor_name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("model.".to_string()),
        Just("model.extra.weight".to_string()),
        Just("adam.m.extra.weight".to_string()),
        Just("adam.v.decoder.extra".to_string()),
        Just("__metadata__x".to_string()),
        "[a-z.]{1,12}".prop_map(|s| format!("model.{s}")),
    ]
}

/// Any [`Mutation`], the kinds weighted so that each gets hundreds of the cases.
pub fn mutation() -> impl Strategy<Value = Mutation> {
    let boundary = prop_oneof![
        Just(Boundary::Start),
        Just(Boundary::HeaderEnd),
        Just(Boundary::End)
    ];
    let offsets = prop_oneof![
        (1u64..1 << 40).prop_map(OffsetLie::PastEnd),
        Just(OffsetLie::Reversed),
        any::<Index>().prop_map(OffsetLie::Overlap),
        (any::<u64>(), any::<u64>()).prop_map(|(a, b)| OffsetLie::Absurd(a, b)),
    ];
    let shape = prop_oneof![
        prop::collection::vec(0usize..40, 0..4).prop_map(ShapeLie::Any),
        Just(ShapeLie::Overflow),
        Just(ShapeLie::ZeroAndHuge),
        (0u8..4).prop_map(ShapeLie::Rearranged),
    ];
    let entry = prop::sample::select(vec![
        "3",
        "null",
        "[]",
        "{}",
        "\"F32\"",
        r#"{"dtype":"F32"}"#,
        r#"{"dtype":"F32","shape":[1]}"#,
        r#"{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}"#,
        r#"{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}"#,
        r#"{"dtype":"F32","shape":"1","data_offsets":[0,4]}"#,
        r#"{"dtype":"F33","shape":[1],"data_offsets":[0,4]}"#,
        r#"{"dtype":"F32","shape":[1],"data_offsets":[0]}"#,
        r#"{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}"#,
    ])
    .prop_map(String::from);
    let meta = prop_oneof![
        Just(MetaLie::Remove),
        Just(MetaLie::OtherKey),
        prop_oneof![
            Just(String::new()),
            Just("{".to_string()),
            Just("null".to_string()),
            Just("[]".to_string()),
            Just("{}".to_string()),
            ".{0,20}",
        ]
        .prop_map(MetaLie::Text),
        any::<Index>().prop_map(MetaLie::Truncated),
        any::<Index>().prop_map(MetaLie::RemoveField),
        (any::<Index>(), field_value()).prop_map(|(i, v)| MetaLie::SetField(i, v)),
        Just(MetaLie::ExtraField),
        Just(MetaLie::NotAString),
    ];
    prop_oneof![
        2 => any::<Index>().prop_map(Mutation::Truncate),
        2 => (boundary, -8i8..=8).prop_map(|(b, d)| Mutation::TruncateNear(b, d)),
        2 => (any::<Index>(), 0u8..8).prop_map(|(i, b)| Mutation::FlipBit(i, b)),
        2 => (0u8..64).prop_map(Mutation::FlipLengthBit),
        3 => (any::<Index>(), 0u8..8).prop_map(|(i, b)| Mutation::FlipHeaderBit(i, b)),
        2 => prop_oneof![prop::sample::select(LENGTHS.to_vec()), any::<u64>()]
            .prop_map(Mutation::SetLength),
        1 => (any::<Index>(), prop::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(i, b)| Mutation::Overwrite(i, b)),
        1 => (
            prop::option::of(0u64..256),
            prop::collection::vec(any::<u8>(), 0..300)
        )
            .prop_map(|(n, b)| Mutation::Random(n, b)),
        2 => (any::<Index>(), offsets).prop_map(|(i, o)| Mutation::Offsets(i, o)),
        3 => (any::<Index>(), shape).prop_map(|(i, s)| Mutation::Shape(i, s)),
        2 => (any::<Index>(), prop::sample::select(DTYPES.to_vec()), any::<bool>())
            .prop_map(|(i, d, a)| Mutation::Dtype(i, d, a)),
        1 => (any::<Index>(), entry).prop_map(|(i, e)| Mutation::Entry(i, e)),
        1 => (any::<Index>(), tensor_name()).prop_map(|(i, n)| Mutation::Rename(i, n)),
        1 => (any::<Index>(), any::<bool>()).prop_map(|(i, r)| Mutation::Drop(i, r)),
        1 => (tensor_name(), prop::collection::vec(0usize..5, 0..3))
            .prop_map(|(n, s)| Mutation::Extra(n, s)),
        4 => meta.prop_map(Mutation::Meta),
        1 => (
            any::<Index>(),
            prop_oneof![
                Just(f32::NAN.to_bits()),
                Just(f32::INFINITY.to_bits()),
                Just(f32::NEG_INFINITY.to_bits()),
                Just(1u32), // the smallest subnormal
                any::<u32>(),
            ]
        )
            .prop_map(|(i, v)| Mutation::Value(i, v)),
    ]
}

/// Every JSON pointer into `value` (containers and leaves, not the root).
fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let p = format!("{at}/{k}");
                out.push(p.clone());
                pointers(v, p, out);
            }
        }
        Value::Array(items) => {
            // The first and the last element stand for the rest.
            let n = items.len();
            for i in [0, n.saturating_sub(1)].into_iter().filter(|&i| i < n) {
                let p = format!("{at}/{i}");
                out.push(p.clone());
                pointers(&items[i], p, out);
            }
        }
        _ => {}
    }
}

/// `base` (a valid file whose metadata entry `key` holds JSON) with `m` applied.
pub fn apply(m: &Mutation, base: &[u8], key: &str) -> Vec<u8> {
    let mut bytes = base.to_vec();
    let mut parts = Parts::of(base);
    let header_end = 8 + u64::from_le_bytes(base[..8].try_into().unwrap()) as usize;
    let names = parts.names();
    let pick = |i: &Index| names[i.index(names.len())].clone();
    match m {
        Mutation::Truncate(i) => {
            bytes.truncate(i.index(bytes.len()));
            return bytes;
        }
        Mutation::TruncateNear(b, d) => {
            let at = match b {
                Boundary::Start => 4,
                Boundary::HeaderEnd => header_end,
                Boundary::End => bytes.len() - 9,
            };
            bytes.truncate(at.saturating_add_signed(*d as isize));
            return bytes;
        }
        Mutation::FlipBit(i, bit) => {
            let at = i.index(bytes.len());
            bytes[at] ^= 1 << bit;
            return bytes;
        }
        Mutation::FlipLengthBit(bit) => {
            bytes[*bit as usize / 8] ^= 1 << (bit % 8);
            return bytes;
        }
        Mutation::FlipHeaderBit(i, bit) => {
            bytes[8 + i.index(header_end - 8)] ^= 1 << bit;
            return bytes;
        }
        Mutation::SetLength(n) => {
            bytes[..8].copy_from_slice(&n.to_le_bytes());
            return bytes;
        }
        Mutation::Overwrite(i, with) => {
            let at = i.index(bytes.len());
            for (b, w) in bytes[at..].iter_mut().zip(with) {
                *b = *w;
            }
            return bytes;
        }
        Mutation::Random(n, rest) => {
            let mut out = n.map(|n| n.to_le_bytes().to_vec()).unwrap_or_default();
            out.extend_from_slice(rest);
            return out;
        }
        Mutation::Value(i, bits) => {
            let at = header_end + 4 * i.index((bytes.len() - header_end) / 4);
            bytes[at..at + 4].copy_from_slice(&bits.to_le_bytes());
            return bytes;
        }
        Mutation::Offsets(i, lie) => {
            let name = pick(i);
            let (s, e) = parts.offsets(&name);
            let new = match lie {
                OffsetLie::PastEnd(k) => json!([s, parts.data.len() as u64 + k]),
                OffsetLie::Reversed => json!([e, s]),
                OffsetLie::Overlap(j) => {
                    let (a, b) = parts.offsets(&pick(j));
                    json!([a, b])
                }
                OffsetLie::Absurd(a, b) => json!([a, b]),
            };
            parts.header[&name]["data_offsets"] = new;
        }
        Mutation::Shape(i, lie) => {
            let name = pick(i);
            let shape = parts.shape(&name);
            let numel: usize = shape.iter().product();
            let new = match lie {
                ShapeLie::Any(s) => json!(s),
                ShapeLie::Overflow => json!([1u64 << 32, 1u64 << 32, 1u64 << 32]),
                ShapeLie::ZeroAndHuge => json!([0, u64::MAX, u64::MAX]),
                ShapeLie::Rearranged(k) => match k {
                    0 => json!([numel]),
                    1 => json!(shape.iter().rev().collect::<Vec<_>>()),
                    2 => json!([&[1][..], &shape[..]].concat()),
                    _ => json!([&shape[..], &[1][..]].concat()),
                },
            };
            parts.header[&name]["shape"] = new;
        }
        Mutation::Dtype(i, dtype, adjust) => {
            let name = pick(i);
            parts.header[&name]["dtype"] = json!(dtype);
            if *adjust {
                let numel: usize = parts.shape(&name).iter().product();
                let bytes = 4 * numel;
                let shape = match *dtype {
                    "F64" | "I64" if bytes.is_multiple_of(8) => json!([bytes / 8]),
                    "F16" | "BF16" | "I16" => json!([bytes / 2]),
                    "I8" | "U8" | "BOOL" | "F8_E4M3" => json!([bytes]),
                    _ => json!([numel]),
                };
                parts.header[&name]["shape"] = shape;
            }
        }
        Mutation::Entry(i, raw) => {
            let name = pick(i);
            parts.header[&name] = serde_json::from_str(raw).unwrap();
        }
        Mutation::Rename(i, to) => {
            let name = pick(i);
            let info = parts.header.remove(&name).unwrap();
            parts.header.insert(to.clone(), info);
        }
        Mutation::Drop(i, repack) => {
            let name = pick(i);
            if *repack {
                let kept = parts.tensors().into_iter().filter(|t| t.0 != name);
                parts.repack(kept.collect());
            } else {
                parts.header.remove(&name);
            }
        }
        Mutation::Extra(name, shape) => {
            let mut tensors = parts.tensors();
            tensors.retain(|t| t.0 != *name);
            let numel: usize = shape.iter().product();
            let info =
                json!({"dtype": "F32", "shape": shape, "data_offsets": [0, 0]});
            tensors.push((name.clone(), info, vec![0; 4 * numel]));
            parts.repack(tensors);
        }
        Mutation::Meta(lie) => {
            let meta = parts.header["__metadata__"].as_object_mut().unwrap();
            let mut run: Value =
                serde_json::from_str(meta[key].as_str().unwrap()).unwrap();
            let mut fields = Vec::new();
            pointers(&run, String::new(), &mut fields);
            match lie {
                MetaLie::Remove => {
                    parts.header.remove("__metadata__");
                }
                MetaLie::OtherKey => {
                    let v = meta.remove(key).unwrap();
                    meta.insert(format!("{key}x"), v);
                }
                MetaLie::Text(t) => {
                    meta[key] = json!(t);
                }
                MetaLie::Truncated(i) => {
                    let s = meta[key].as_str().unwrap().to_string();
                    let mut cut = i.index(s.len());
                    while !s.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    meta[key] = json!(s[..cut]);
                }
                MetaLie::RemoveField(i) => {
                    let p = &fields[i.index(fields.len())];
                    let (parent, last) = p.rsplit_once('/').unwrap();
                    match run.pointer_mut(parent).unwrap() {
                        Value::Object(m) => {
                            m.remove(last);
                        }
                        Value::Array(a) => {
                            a.remove(last.parse::<usize>().unwrap());
                        }
                        _ => unreachable!("a pointer's parent is a container"),
                    }
                    meta[key] = json!(run.to_string());
                }
                MetaLie::SetField(i, v) => {
                    let p = &fields[i.index(fields.len())];
                    *run.pointer_mut(p).unwrap() = serde_json::from_str(v).unwrap();
                    meta[key] = json!(run.to_string());
                }
                MetaLie::SetPointer(p, v) => {
                    *run.pointer_mut(p).unwrap() = serde_json::from_str(v).unwrap();
                    meta[key] = json!(run.to_string());
                }
                MetaLie::ExtraField => {
                    run["surprise"] = json!(1);
                    meta[key] = json!(run.to_string());
                }
                MetaLie::NotAString => {
                    meta[key] = json!(3);
                }
            }
        }
    }
    parts.bytes()
}
