//! AES-128 on the host: OpenSSL's T-table AES, bit-exact with the device's
//! (`kernels/lite_aes_xts.cuh`), and the XTS tweak multiplication.

// ---- AES-128: tables and block functions (OpenSSL's T-table AES, as the device) -------------

const fn xtime(a: u8) -> u8 {
    (a << 1) ^ if a & 0x80 != 0 { 0x1b } else { 0 }
}

const fn gmul(mut a: u8, mut b: u8) -> u8 {
    let mut r = 0;
    while b != 0 {
        if b & 1 != 0 {
            r ^= a;
        }
        a = xtime(a);
        b >>= 1;
    }
    r
}

/// `a^254` in GF(2^8): the multiplicative inverse (0 for 0).
const fn ginv(a: u8) -> u8 {
    let (mut r, mut base, mut e) = (1u8, a, 254u32);
    while e > 0 {
        if e & 1 != 0 {
            r = gmul(r, base);
        }
        base = gmul(base, base);
        e >>= 1;
    }
    r
}

const fn build_sbox() -> [u8; 256] {
    let mut s = [0u8; 256];
    let mut x = 0;
    while x < 256 {
        let b = ginv(x as u8);
        s[x] = b ^ b.rotate_left(1) ^ b.rotate_left(2) ^ b.rotate_left(3) ^ b.rotate_left(4) ^ 0x63;
        x += 1;
    }
    s
}

const fn invert(s: &[u8; 256]) -> [u8; 256] {
    let mut inv = [0u8; 256];
    let mut x = 0;
    while x < 256 {
        inv[s[x] as usize] = x as u8;
        x += 1;
    }
    inv
}

/// The AES S-box.
pub const SBOX: [u8; 256] = build_sbox();
/// The inverse S-box (OpenSSL's `Td4`).
pub const INV_SBOX: [u8; 256] = invert(&SBOX);

const fn build_te0() -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut x = 0;
    while x < 256 {
        let s = SBOX[x];
        t[x] = (gmul(s, 2) as u32) << 24 | (s as u32) << 16 | (s as u32) << 8 | gmul(s, 3) as u32;
        x += 1;
    }
    t
}

const fn build_td0() -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut x = 0;
    while x < 256 {
        let s = INV_SBOX[x];
        t[x] = (gmul(s, 14) as u32) << 24
            | (gmul(s, 9) as u32) << 16
            | (gmul(s, 13) as u32) << 8
            | gmul(s, 11) as u32;
        x += 1;
    }
    t
}

/// OpenSSL's `Te0` (`Te1..Te3` are its rotations right by 8, 16, 24 bits).
pub const TE0: [u32; 256] = build_te0();
/// OpenSSL's `Td0` (`Td1..Td3` are its rotations right by 8, 16, 24 bits).
pub const TD0: [u32; 256] = build_td0();

#[inline(always)]
fn te(k: u32, x: u32) -> u32 {
    TE0[(x & 0xff) as usize].rotate_right(8 * k)
}

#[inline(always)]
fn td(k: u32, x: u32) -> u32 {
    TD0[(x & 0xff) as usize].rotate_right(8 * k)
}

const RCON: [u32; 10] = [
    0x0100_0000,
    0x0200_0000,
    0x0400_0000,
    0x0800_0000,
    0x1000_0000,
    0x2000_0000,
    0x4000_0000,
    0x8000_0000,
    0x1b00_0000,
    0x3600_0000,
];

fn sub_word(w: u32) -> u32 {
    u32::from_be_bytes(w.to_be_bytes().map(|b| SBOX[b as usize]))
}

/// The AES-128 encryption key schedule (OpenSSL's `AES_set_encrypt_key`: 44 big-endian words).
pub fn expand_encrypt_key(key: &[u8; 16]) -> [u32; 44] {
    let mut rk = [0u32; 44];
    for (i, w) in rk.iter_mut().take(4).enumerate() {
        *w = u32::from_be_bytes([key[4 * i], key[4 * i + 1], key[4 * i + 2], key[4 * i + 3]]);
    }
    for r in 0..10 {
        let t = rk[4 * r + 3];
        rk[4 * r + 4] = rk[4 * r] ^ sub_word(t.rotate_left(8)) ^ RCON[r];
        rk[4 * r + 5] = rk[4 * r + 1] ^ rk[4 * r + 4];
        rk[4 * r + 6] = rk[4 * r + 2] ^ rk[4 * r + 5];
        rk[4 * r + 7] = rk[4 * r + 3] ^ rk[4 * r + 6];
    }
    rk
}

/// The AES-128 decryption key schedule of an encryption schedule (OpenSSL's
/// `AES_set_decrypt_key`: the rounds in reverse order, InvMixColumns applied to rounds 1..9).
pub fn expand_decrypt_key(enc: &[u32; 44]) -> [u32; 44] {
    let mut rk = [0u32; 44];
    for r in 0..=10 {
        rk[4 * r..4 * r + 4].copy_from_slice(&enc[4 * (10 - r)..4 * (10 - r) + 4]);
    }
    for w in rk.iter_mut().take(40).skip(4) {
        let s = |shift: u32| SBOX[((*w >> shift) & 0xff) as usize] as u32;
        *w = td(0, s(24)) ^ td(1, s(16)) ^ td(2, s(8)) ^ td(3, s(0));
    }
    rk
}

fn block_words(b: &[u8; 16]) -> [u32; 4] {
    std::array::from_fn(|i| {
        u32::from_be_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])
    })
}

fn words_block(w: [u32; 4]) -> [u8; 16] {
    let mut b = [0u8; 16];
    for (i, x) in w.iter().enumerate() {
        b[4 * i..4 * i + 4].copy_from_slice(&x.to_be_bytes());
    }
    b
}

/// AES-128 encryption of one block with an encryption schedule ([`expand_encrypt_key`]).
pub fn aes_encrypt_block(rk: &[u32; 44], block: &[u8; 16]) -> [u8; 16] {
    let w = block_words(block);
    let mut s = [w[0] ^ rk[0], w[1] ^ rk[1], w[2] ^ rk[2], w[3] ^ rk[3]];
    for r in 1..10 {
        let t: [u32; 4] = std::array::from_fn(|i| {
            te(0, s[i] >> 24)
                ^ te(1, s[(i + 1) % 4] >> 16)
                ^ te(2, s[(i + 2) % 4] >> 8)
                ^ te(3, s[(i + 3) % 4])
                ^ rk[4 * r + i]
        });
        s = t;
    }
    let out: [u32; 4] = std::array::from_fn(|i| {
        (te(2, s[i] >> 24) & 0xff00_0000)
            ^ (te(3, s[(i + 1) % 4] >> 16) & 0x00ff_0000)
            ^ (te(0, s[(i + 2) % 4] >> 8) & 0x0000_ff00)
            ^ (te(1, s[(i + 3) % 4]) & 0x0000_00ff)
            ^ rk[40 + i]
    });
    words_block(out)
}

/// AES-128 decryption of one block with a decryption schedule ([`expand_decrypt_key`]).
pub fn aes_decrypt_block(rk: &[u32; 44], block: &[u8; 16]) -> [u8; 16] {
    let w = block_words(block);
    let mut s = [w[0] ^ rk[0], w[1] ^ rk[1], w[2] ^ rk[2], w[3] ^ rk[3]];
    for r in 1..10 {
        let t: [u32; 4] = std::array::from_fn(|i| {
            td(0, s[i] >> 24)
                ^ td(1, s[(i + 3) % 4] >> 16)
                ^ td(2, s[(i + 2) % 4] >> 8)
                ^ td(3, s[(i + 1) % 4])
                ^ rk[4 * r + i]
        });
        s = t;
    }
    let inv = |x: u32| INV_SBOX[(x & 0xff) as usize] as u32;
    let out: [u32; 4] = std::array::from_fn(|i| {
        (inv(s[i] >> 24) << 24)
            ^ (inv(s[(i + 3) % 4] >> 16) << 16)
            ^ (inv(s[(i + 2) % 4] >> 8) << 8)
            ^ inv(s[(i + 1) % 4])
            ^ rk[40 + i]
    });
    words_block(out)
}

/// `t · α` in GF(2^128) on the 16-byte little-endian tweak (IEEE 1619 §5.2).
pub fn xts_mul_alpha(t: &[u8; 16]) -> [u8; 16] {
    let v = u128::from_le_bytes(*t);
    let r = (v << 1) ^ if v >> 127 != 0 { 0x87 } else { 0 };
    r.to_le_bytes()
}
