//! SHA-256, SHA-384 and SHA-512 (FIPS 180-4), behind `norma:crypta`'s `digere`
//! (docs/norma.md § crypta). Whole messages in memory; no streaming interface.

/// FIPS 180-4 § 4.2.2: the first 32 bits of the fractional parts of the cube roots of
/// the first 64 primes.
const K256: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

/// FIPS 180-4 § 5.3.3.
const H256: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// FIPS 180-4 § 4.2.3: the first 64 bits of the fractional parts of the cube roots of
/// the first 80 primes.
const K512: [u64; 80] = [
    0x428a2f98d728ae22,
    0x7137449123ef65cd,
    0xb5c0fbcfec4d3b2f,
    0xe9b5dba58189dbbc,
    0x3956c25bf348b538,
    0x59f111f1b605d019,
    0x923f82a4af194f9b,
    0xab1c5ed5da6d8118,
    0xd807aa98a3030242,
    0x12835b0145706fbe,
    0x243185be4ee4b28c,
    0x550c7dc3d5ffb4e2,
    0x72be5d74f27b896f,
    0x80deb1fe3b1696b1,
    0x9bdc06a725c71235,
    0xc19bf174cf692694,
    0xe49b69c19ef14ad2,
    0xefbe4786384f25e3,
    0x0fc19dc68b8cd5b5,
    0x240ca1cc77ac9c65,
    0x2de92c6f592b0275,
    0x4a7484aa6ea6e483,
    0x5cb0a9dcbd41fbd4,
    0x76f988da831153b5,
    0x983e5152ee66dfab,
    0xa831c66d2db43210,
    0xb00327c898fb213f,
    0xbf597fc7beef0ee4,
    0xc6e00bf33da88fc2,
    0xd5a79147930aa725,
    0x06ca6351e003826f,
    0x142929670a0e6e70,
    0x27b70a8546d22ffc,
    0x2e1b21385c26c926,
    0x4d2c6dfc5ac42aed,
    0x53380d139d95b3df,
    0x650a73548baf63de,
    0x766a0abb3c77b2a8,
    0x81c2c92e47edaee6,
    0x92722c851482353b,
    0xa2bfe8a14cf10364,
    0xa81a664bbc423001,
    0xc24b8b70d0f89791,
    0xc76c51a30654be30,
    0xd192e819d6ef5218,
    0xd69906245565a910,
    0xf40e35855771202a,
    0x106aa07032bbd1b8,
    0x19a4c116b8d2d0c8,
    0x1e376c085141ab53,
    0x2748774cdf8eeb99,
    0x34b0bcb5e19b48a8,
    0x391c0cb3c5c95a63,
    0x4ed8aa4ae3418acb,
    0x5b9cca4f7763e373,
    0x682e6ff3d6b2b8a3,
    0x748f82ee5defb2fc,
    0x78a5636f43172f60,
    0x84c87814a1f0ab72,
    0x8cc702081a6439ec,
    0x90befffa23631e28,
    0xa4506cebde82bde9,
    0xbef9a3f7b2c67915,
    0xc67178f2e372532b,
    0xca273eceea26619c,
    0xd186b8c721c0c207,
    0xeada7dd6cde0eb1e,
    0xf57d4f7fee6ed178,
    0x06f067aa72176fba,
    0x0a637dc5a2c898a6,
    0x113f9804bef90dae,
    0x1b710b35131c471b,
    0x28db77f523047d84,
    0x32caab7b40c72493,
    0x3c9ebe0a15c9bebc,
    0x431d67c49c100d4c,
    0x4cc5d4becb3e42b6,
    0x597f299cfc657e2a,
    0x5fcb6fab3ad6faec,
    0x6c44198c4a475817,
];

/// FIPS 180-4 § 5.3.5.
const H512: [u64; 8] = [
    0x6a09e667f3bcc908,
    0xbb67ae8584caa73b,
    0x3c6ef372fe94f82b,
    0xa54ff53a5f1d36f1,
    0x510e527fade682d1,
    0x9b05688c2b3e6c1f,
    0x1f83d9abfb41bd6b,
    0x5be0cd19137e2179,
];

/// FIPS 180-4 § 5.3.4.
const H384: [u64; 8] = [
    0xcbbb9d5dc1059ed8,
    0x629a292a367cd507,
    0x9159015a3070dd17,
    0x152fecd8f70e5939,
    0x67332667ffc00b31,
    0x8eb44a8768581511,
    0xdb0c2e0d64f98fa7,
    0x47b5481dbefa4fa4,
];

/// The message padded to whole blocks of `block` bytes (§ 5.1): a 1 bit, zeros, and the
/// length in bits big-endian in the last `len_bytes` bytes.
fn padded(data: &[u8], block: usize, len_bytes: usize) -> Vec<u8> {
    let mut m = data.to_vec();
    m.push(0x80);
    while m.len() % block != block - len_bytes {
        m.push(0);
    }
    let bits = (data.len() as u128) * 8;
    m.extend_from_slice(&bits.to_be_bytes()[16 - len_bytes..]);
    m
}

/// The SHA-2 computation (§ 6.2, § 6.4) for one word type: `$bytes`-byte words,
/// `$rounds` rounds with constants `$k`, the rotations and shifts of σ0, σ1, Σ0, Σ1
/// (§ 4.1.2, § 4.1.3), from `$iv`, its result cut to `$words` words. One body for
/// SHA-256 (32-bit words) and the SHA-512 family (64-bit words).
macro_rules! sha2 {
    ($data:expr, $iv:expr, $words:expr, $word:ty, $bytes:expr, $rounds:expr, $k:expr,
     s0 = ($a0:expr, $b0:expr, $c0:expr), s1 = ($a1:expr, $b1:expr, $c1:expr),
     big_s0 = ($d0:expr, $e0:expr, $f0:expr), big_s1 = ($d1:expr, $e1:expr, $f1:expr)) => {{
        let mut h: [$word; 8] = $iv;
        for block in padded($data, 16 * $bytes, 2 * $bytes).chunks(16 * $bytes) {
            let mut w = [0 as $word; $rounds];
            for (t, word) in block.chunks($bytes).enumerate() {
                let mut b = [0u8; $bytes];
                b.copy_from_slice(word);
                w[t] = <$word>::from_be_bytes(b);
            }
            for t in 16..$rounds {
                let x = w[t - 15];
                let s0 = x.rotate_right($a0) ^ x.rotate_right($b0) ^ (x >> $c0);
                let y = w[t - 2];
                let s1 = y.rotate_right($a1) ^ y.rotate_right($b1) ^ (y >> $c1);
                w[t] = s1
                    .wrapping_add(w[t - 7])
                    .wrapping_add(s0)
                    .wrapping_add(w[t - 16]);
            }
            let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = h;
            for t in 0..$rounds {
                let big_s1 = e.rotate_right($d1) ^ e.rotate_right($e1) ^ e.rotate_right($f1);
                let ch = (e & f) ^ (!e & g);
                let t1 = hh
                    .wrapping_add(big_s1)
                    .wrapping_add(ch)
                    .wrapping_add($k[t])
                    .wrapping_add(w[t]);
                let big_s0 = a.rotate_right($d0) ^ a.rotate_right($e0) ^ a.rotate_right($f0);
                let maj = (a & b) ^ (a & c) ^ (b & c);
                let t2 = big_s0.wrapping_add(maj);
                hh = g;
                g = f;
                f = e;
                e = d.wrapping_add(t1);
                d = c;
                c = b;
                b = a;
                a = t1.wrapping_add(t2);
            }
            for (x, y) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
                *x = x.wrapping_add(y);
            }
        }
        h[..$words].iter().flat_map(|x| x.to_be_bytes()).collect()
    }};
}

/// SHA-256 (§ 6.2).
pub fn sha256(data: &[u8]) -> Vec<u8> {
    sha2!(
        data,
        H256,
        8,
        u32,
        4,
        64,
        K256,
        s0 = (7, 18, 3),
        s1 = (17, 19, 10),
        big_s0 = (2, 13, 22),
        big_s1 = (6, 11, 25)
    )
}

/// The SHA-512 computation (§ 6.4) from `iv`, its result cut to `words` 64-bit words.
fn sha512_family(data: &[u8], iv: [u64; 8], words: usize) -> Vec<u8> {
    sha2!(
        data,
        iv,
        words,
        u64,
        8,
        80,
        K512,
        s0 = (1, 8, 7),
        s1 = (19, 61, 6),
        big_s0 = (28, 34, 39),
        big_s1 = (14, 18, 41)
    )
}

/// SHA-512 (§ 6.4).
pub fn sha512(data: &[u8]) -> Vec<u8> {
    sha512_family(data, H512, 8)
}

/// SHA-384 (§ 6.5): SHA-512 from its own initial value, cut to 384 bits.
pub fn sha384(data: &[u8]) -> Vec<u8> {
    sha512_family(data, H384, 6)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::host_codex::hex;

    /// The FIPS 180-4 examples (NIST CSRC "Examples with Intermediate Values":
    /// SHA256.pdf, SHA384.pdf, SHA512.pdf) and the empty message.
    #[test]
    fn fips_180_4_examples() {
        let two_block_256 = b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
        let two_block_512 = b"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
        assert_eq!(
            hex(&sha256(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            hex(&sha256(b"")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            hex(&sha256(two_block_256)),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        assert_eq!(
            hex(&sha384(b"abc")),
            "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed\
             8086072ba1e7cc2358baeca134c825a7"
        );
        assert_eq!(
            hex(&sha384(two_block_512)),
            "09330c33f71147e83d192fc782cd1b4753111b173b3b05d22fa08086e3b0f712\
             fcc7c71a557e2db966c3e9fa91746039"
        );
        assert_eq!(
            hex(&sha512(b"abc")),
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a\
             2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
        );
        assert_eq!(
            hex(&sha512(two_block_512)),
            "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018\
             501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909"
        );
    }
}
