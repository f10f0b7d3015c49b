//! The fuzzing harness's library: valid streams generated from arbitrary bytes
//! ([`generator`]), one mutator per clause of every stream rule ([`mutate`]), the
//! reference as the oracle of what an implementation should have
//! answered ([`oracle`]), streams shrunk on their model ([`shrink`]), the properties
//! the fuzz targets check ([`targets`]), a campaign's accounting, reported as a
//! certification run's ([`campaign`]); native sessions for fuzzing producers, generated
//! from the sources the kit carries and shrunk on their formats' structure ([`native`]).

pub mod campaign;
pub mod generator;
pub mod mutate;
pub mod native;
pub mod oracle;
pub mod producer;
pub mod shrink;
pub mod targets;

/// `len` bytes that depend only on `seed` (SplitMix64): the input of one iteration, so that
/// the same seed gives the same streams on every machine.
pub fn seeded_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        out.extend_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    out.truncate(len);
    out
}
