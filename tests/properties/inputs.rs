//! Generated input: valid files and bodies, mutated. Random bytes rarely get past a reader's first
//! token, so most inputs are a valid seed with a few mutations: cut short, bytes flipped, a hostile
//! token inserted (a huge number, a quote, a conflict marker, deep nesting, invalid UTF-8), a number
//! replaced by a huge one, a stretch repeated.

use proptest::prelude::*;

/// Tokens a hostile or corrupted input holds.
const TOKENS: &[&[u8]] = &[
    b"18446744073709551615",
    b"18446744073709551616",
    b"4294967295",
    b"4294967296",
    b"-1",
    b"-9223372036854775809",
    b"1e400",
    b"-1e400",
    b"1e-400",
    b"3.4e39",
    b"NaN",
    b"inf",
    b"0",
    b"0.0",
    b"\"",
    b"'",
    b"\\",
    b"\\u",
    b"\\ud800",
    b"\n",
    b"\r\n",
    b"\r",
    b"\0",
    b"\xEF\xBB\xBF",
    b"\xff\xfe",
    b"\xc3",
    b"\xe2\x80\xae",
    b"\x1b[2J",
    b"<<<<<<< HEAD\n",
    b"=======\n",
    b">>>>>>> theirs\n",
    b"[",
    b"]",
    b"{",
    b"}",
    b",",
    b":",
    b"=",
    b"#",
    b"[[",
    b"'''",
    b"\"\"\"",
    b"$A",
    b"${A}",
    b"\t",
    b"null",
    b"true",
    b"{}",
    b"[]",
    b"\"\"",
];

/// Numbers a hostile or corrupted input holds: beyond each integer type, beyond f64 and f32, below
/// their precision.
const NUMBERS: &[&[u8]] = &[
    b"18446744073709551615",
    b"18446744073709551616",
    b"4294967295",
    b"4294967296",
    b"9007199254740993",
    b"-1",
    b"-9223372036854775809",
    b"1e400",
    b"1e308",
    b"3.4e39",
    b"1e-400",
    b"-0.0",
    b"0",
    b"1.5",
];

/// A mutation of a seed, at positions given as a share of its length.
#[derive(Debug, Clone)]
enum Mutation {
    /// Cut the input here.
    Truncate(u32),
    /// XOR the byte here.
    Flip(u32, u8),
    /// Insert a hostile token here.
    Insert(u32, usize),
    /// Replace the n-th number of the input by a hostile number.
    Number(u32, usize),
    /// Insert `depth` opening brackets of one kind here (and as many closing ones at the end).
    Nest(u32, usize, u8),
    /// Repeat the stretch starting here, `times` times.
    Repeat(u32, usize, usize),
    /// Remove a stretch.
    Remove(u32, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let token = 0..TOKENS.len();
    prop_oneof![
        2 => any::<u32>().prop_map(Mutation::Truncate),
        3 => (any::<u32>(), 1..=255u8).prop_map(|(at, x)| Mutation::Flip(at, x)),
        4 => (any::<u32>(), token).prop_map(|(at, t)| Mutation::Insert(at, t)),
        3 => (any::<u32>(), 0..NUMBERS.len()).prop_map(|(at, n)| Mutation::Number(at, n)),
        1 => (any::<u32>(), prop_oneof![Just(40usize), Just(200), Just(5000)], 0..4u8)
            .prop_map(|(at, depth, kind)| Mutation::Nest(at, depth, kind)),
        1 => (any::<u32>(), 1..64usize, 2..50usize).prop_map(|(at, len, n)| Mutation::Repeat(at, len, n)),
        1 => (any::<u32>(), 1..64usize).prop_map(|(at, len)| Mutation::Remove(at, len)),
    ]
}

/// A position in `0..=len`.
fn at(pos: &u32, len: usize) -> usize {
    *pos as usize % (len + 1)
}

/// An index in `0..len` (`len` > 0).
fn nth(pos: &u32, len: usize) -> usize {
    *pos as usize % len
}

fn apply(mut bytes: Vec<u8>, mutation: &Mutation) -> Vec<u8> {
    match mutation {
        Mutation::Truncate(i) => bytes.truncate(at(i, bytes.len())),
        Mutation::Flip(i, x) if !bytes.is_empty() => {
            let i = nth(i, bytes.len());
            bytes[i] ^= x;
        }
        Mutation::Flip(..) => {}
        Mutation::Insert(i, t) => {
            let i = at(i, bytes.len());
            bytes.splice(i..i, TOKENS[*t].iter().copied());
        }
        Mutation::Number(i, t) => {
            let numbers = numbers_in(&bytes);
            if !numbers.is_empty() {
                let (start, end) = numbers[nth(i, numbers.len())];
                bytes.splice(start..end, NUMBERS[*t].iter().copied());
            }
        }
        Mutation::Nest(i, depth, kind) => {
            let (open, close): (&[u8], &[u8]) = match kind {
                0 => (b"[", b"]"),
                1 => (b"{\"a\":", b"}"),
                2 => (b"a = [", b"]"),
                _ => (b"{a = ", b"}"),
            };
            let i = at(i, bytes.len());
            let opening: Vec<u8> = open.repeat(*depth);
            bytes.splice(i..i, opening);
            bytes.extend(close.repeat(*depth));
        }
        Mutation::Repeat(i, len, times) => {
            let start = at(i, bytes.len());
            let end = (start + len).min(bytes.len());
            let stretch = bytes[start..end].to_vec();
            let repeated = stretch.repeat(*times);
            bytes.splice(end..end, repeated);
        }
        Mutation::Remove(i, len) => {
            let start = at(i, bytes.len());
            let end = (start + len).min(bytes.len());
            bytes.drain(start..end);
        }
    }
    bytes
}

/// The byte ranges of the numbers in `bytes`: a digit (or a minus before one) and what follows it of
/// digits, `.`, exponents and signs, so that `-0.25e3` is replaced whole.
fn numbers_in(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts = bytes[i].is_ascii_digit()
            || (bytes[i] == b'-' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit));
        if !starts {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        while i < bytes.len() && (bytes[i].is_ascii_digit() || b".eE+-".contains(&bytes[i])) {
            i += 1;
        }
        out.push((start, i));
    }
    out
}

/// Generated bytes, shown as an escaped byte string when a case fails.
#[derive(Clone, PartialEq)]
pub struct Bytes(pub Vec<u8>);

impl std::fmt::Debug for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "b\"{}\"", self.0.escape_ascii())
    }
}

impl std::ops::Deref for Bytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl AsRef<[u8]> for Bytes {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// Inputs for a reader whose valid inputs look like `seeds`: mostly a seed with one to four mutations,
/// sometimes a seed as it is, sometimes random bytes.
pub fn hostile(seeds: Vec<Vec<u8>>) -> BoxedStrategy<Bytes> {
    assert!(!seeds.is_empty());
    let seed = proptest::sample::select(seeds);
    prop_oneof![
        1 => proptest::collection::vec(any::<u8>(), 0..512),
        1 => seed.clone(),
        8 => (seed, proptest::collection::vec(mutation(), 1..=4))
            .prop_map(|(seed, mutations)| mutations.iter().fold(seed, apply)),
    ]
    .prop_map(Bytes)
    .boxed()
}

/// [`hostile`] of text seeds.
pub fn hostile_text(seeds: &[&str]) -> BoxedStrategy<Bytes> {
    hostile(seeds.iter().map(|s| s.as_bytes().to_vec()).collect())
}

#[test]
fn mutations_keep_their_promises() {
    let seed = b"a = 12\nb = [3]\n".to_vec();
    let number = apply(seed.clone(), &Mutation::Number(0, 0));
    assert!(
        String::from_utf8_lossy(&number).contains("18446744073709551615"),
        "{number:?}"
    );
    let nested = apply(seed.clone(), &Mutation::Nest(0, 40, 0));
    assert_eq!(nested.iter().filter(|&&b| b == b'[').count(), 41);
    assert_eq!(
        numbers_in(b"x12y3 [-0.25e3]"),
        vec![(1, 3), (4, 5), (7, 14)]
    );
}
