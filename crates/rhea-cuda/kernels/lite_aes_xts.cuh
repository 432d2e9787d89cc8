// lite_aes_xts.cuh: LITE, AES-128 in XTS mode inside kernels (issue 38; seed S002 ch. 3, the
// ICS'22 paper "LITE"). Data protected by LITE stay encrypted in device memory and in the L1/L2
// caches; a kernel loads ciphertext into registers, decrypts it there, computes, and encrypts
// what it stores. Plaintext exists only in registers (and shared memory, if a kernel puts it
// there). The design and what it protects against: docs/lite.md.
//
// Two layers:
//
// (a) XTS-AES-128 (IEEE 1619-2007) over a data unit of 16·k bytes: block j (0-based) of the
//     unit whose tweak value (the "data unit sequence number") is the 128-bit integer i is
//         T_j = AES_K2(i as 16 little-endian bytes) · α^j   in GF(2^128) (IEEE 1619's byte order),
//         C_j = AES_K1(P_j ⊕ T_j) ⊕ T_j,        P_j = AES⁻¹_K1(C_j ⊕ T_j) ⊕ T_j.
//     lite_xts_tweak / lite_xts_encrypt / lite_xts_decrypt; checked against the IEEE vectors.
//
// (b) LITE's memory form: every 16-byte block of device memory is its own data unit (j = 0),
//     and its tweak value is its device virtual address divided by 16: the address a kernel
//     dereferences (the CUdeviceptr the driver returned plus the offset; the same virtual
//     address that unified memory gives the host), as in the seed's experiments. So
//         C = AES_K1(P ⊕ T) ⊕ T,   T = AES_K2(addr / 16).
//     The host side (rhea_cuda::lite) encrypts uploads the same way; it is XTS with 16-byte
//     sectors and sector number addr / 16 (the `xts-mode` crate, the tests' oracle). Blocks are
//     16-byte aligned; the bytes of a block are the plaintext bytes in memory order (a u64 word
//     is its 8 little-endian bytes). Ciphertext moved to another address does not decrypt.
//
// The seed's four entry points (S002 Table 3.1), each on memory in the form (b):
//   lite_decrypt<W, MASKED>(T, K, p, mask)       word-granular: W = u32 (four adjacent lanes form
//   lite_encrypt<W, MASKED>(T, K, p, v, mask)    a 128-bit block) or u64 (two lanes); the words
//                                                travel by __shfl_sync(mask, v, base + j),
//                                                base = lane & ~(lanes per block - 1)
//   lite_decrypt_v4(T, K, p) / lite_encrypt_v4(T, K, p, v)   one 16-byte block per thread (uint4)
// plus lite_decrypt_loaded (the word-granular decryption of a word already loaded: a kernel
// issues all its loads first, then decrypts: the "delayed shuffle"), lite_load_word (a word of
// read-only unpadded data at any address: the block around it is decrypted) and the padded
// element helpers (lite_read_padded / lite_write_padded: one u64 per 16-byte block).
//
// Word-granular contract. Lane l of a group of G = 16 / sizeof(W) lanes (base = l & ~(G-1))
// passes the address of word l & (G-1) of the group's block (contiguous access a[i], i = global
// thread index, on a 16-byte aligned array). `mask` is the set of lanes that make the call,
// taken with __ballot_sync before the code diverges (the seed's "masked shuffle"); every lane in
// it must call with the same mask. With MASKED = false the full mask 0xffffffff is used and all
// 32 lanes of the warp must call (converged code): the unoptimised form. The seed's listing
// (shuffles with the full mask inside `if (tid % 4 == 0)`, and __shfl_down with a lane number)
// is not followed: that is undefined on Volta and later. Here every lane of a group gathers the
// whole block and decrypts it (SIMT: the same issue slots as one lane decrypting, no second
// shuffle to redistribute). A word whose lane is not in `mask` is loaded from memory by the
// lanes that need it. lite_encrypt stores the whole block: a block whose group is only partly in
// `mask` is read, decrypted, merged and re-encrypted (the absent lanes' words keep their value)
// by the group's first calling lane, which is safe only if no other thread writes that block
// meanwhile ("encryption block false sharing": pad data that several threads write,
// lite_write_padded).
//
// Tables and keys. AES is OpenSSL's T-table AES (aes_core.c, as the seed ported it): Te0..Te3,
// Td0..Td3 and Td4 (the inverse S-box), 8.25 KB, copied once per block into shared memory by
// lite_load_tables (all threads of the block, before any of them diverges; it ends with
// __syncthreads()). Te0, Td0 and Td4 are the literal tables below; Te1..3 and Td1..3 are their
// byte rotations. Lookups depend on the data, so the timing of shared-memory bank conflicts does
// too: a cache-timing side channel, out of LITE's threat model (as in the seed). The round keys
// travel in the launch's parameter block (struct LiteKeys, 528 bytes; Rust twin
// rhea_cuda::lite::KeySchedules), read as uniform constant-bank loads.

#pragma once

#include "common.cuh"

// The AES-128 key schedules of a LITE session, in OpenSSL's word order (AES_set_encrypt_key /
// AES_set_decrypt_key: big-endian words; the decryption schedule in reverse round order with
// InvMixColumns applied to rounds 1..9). Computed on the host (rhea_cuda::lite::KeySchedules).
struct LiteKeys {
    u32 k1_enc[44];  // key 1 (data), encryption
    u32 k1_dec[44];  // key 1 (data), decryption
    u32 k2_enc[44];  // key 2 (tweak), encryption
};
static_assert(sizeof(LiteKeys) == 528, "LiteKeys: not the Rust size");
static_assert(alignof(LiteKeys) == 4, "LiteKeys: not the Rust alignment");
static_assert(RHEA_OFFSETOF(LiteKeys, k1_dec) == 176, "LiteKeys::k1_dec: not the Rust offset");
static_assert(RHEA_OFFSETOF(LiteKeys, k2_enc) == 352, "LiteKeys::k2_enc: not the Rust offset");

// The T-tables in shared memory (one per block: `__shared__ LiteTables T;`).
struct LiteTables {
    u32 te[4][256];
    u32 td[4][256];
    unsigned char td4[256];
};

__device__ const u32 LITE_TE0[256] = {
    0xc66363a5u, 0xf87c7c84u, 0xee777799u, 0xf67b7b8du, 0xfff2f20du, 0xd66b6bbdu, 0xde6f6fb1u, 0x91c5c554u,
    0x60303050u, 0x02010103u, 0xce6767a9u, 0x562b2b7du, 0xe7fefe19u, 0xb5d7d762u, 0x4dababe6u, 0xec76769au,
    0x8fcaca45u, 0x1f82829du, 0x89c9c940u, 0xfa7d7d87u, 0xeffafa15u, 0xb25959ebu, 0x8e4747c9u, 0xfbf0f00bu,
    0x41adadecu, 0xb3d4d467u, 0x5fa2a2fdu, 0x45afafeau, 0x239c9cbfu, 0x53a4a4f7u, 0xe4727296u, 0x9bc0c05bu,
    0x75b7b7c2u, 0xe1fdfd1cu, 0x3d9393aeu, 0x4c26266au, 0x6c36365au, 0x7e3f3f41u, 0xf5f7f702u, 0x83cccc4fu,
    0x6834345cu, 0x51a5a5f4u, 0xd1e5e534u, 0xf9f1f108u, 0xe2717193u, 0xabd8d873u, 0x62313153u, 0x2a15153fu,
    0x0804040cu, 0x95c7c752u, 0x46232365u, 0x9dc3c35eu, 0x30181828u, 0x379696a1u, 0x0a05050fu, 0x2f9a9ab5u,
    0x0e070709u, 0x24121236u, 0x1b80809bu, 0xdfe2e23du, 0xcdebeb26u, 0x4e272769u, 0x7fb2b2cdu, 0xea75759fu,
    0x1209091bu, 0x1d83839eu, 0x582c2c74u, 0x341a1a2eu, 0x361b1b2du, 0xdc6e6eb2u, 0xb45a5aeeu, 0x5ba0a0fbu,
    0xa45252f6u, 0x763b3b4du, 0xb7d6d661u, 0x7db3b3ceu, 0x5229297bu, 0xdde3e33eu, 0x5e2f2f71u, 0x13848497u,
    0xa65353f5u, 0xb9d1d168u, 0x00000000u, 0xc1eded2cu, 0x40202060u, 0xe3fcfc1fu, 0x79b1b1c8u, 0xb65b5bedu,
    0xd46a6abeu, 0x8dcbcb46u, 0x67bebed9u, 0x7239394bu, 0x944a4adeu, 0x984c4cd4u, 0xb05858e8u, 0x85cfcf4au,
    0xbbd0d06bu, 0xc5efef2au, 0x4faaaae5u, 0xedfbfb16u, 0x864343c5u, 0x9a4d4dd7u, 0x66333355u, 0x11858594u,
    0x8a4545cfu, 0xe9f9f910u, 0x04020206u, 0xfe7f7f81u, 0xa05050f0u, 0x783c3c44u, 0x259f9fbau, 0x4ba8a8e3u,
    0xa25151f3u, 0x5da3a3feu, 0x804040c0u, 0x058f8f8au, 0x3f9292adu, 0x219d9dbcu, 0x70383848u, 0xf1f5f504u,
    0x63bcbcdfu, 0x77b6b6c1u, 0xafdada75u, 0x42212163u, 0x20101030u, 0xe5ffff1au, 0xfdf3f30eu, 0xbfd2d26du,
    0x81cdcd4cu, 0x180c0c14u, 0x26131335u, 0xc3ecec2fu, 0xbe5f5fe1u, 0x359797a2u, 0x884444ccu, 0x2e171739u,
    0x93c4c457u, 0x55a7a7f2u, 0xfc7e7e82u, 0x7a3d3d47u, 0xc86464acu, 0xba5d5de7u, 0x3219192bu, 0xe6737395u,
    0xc06060a0u, 0x19818198u, 0x9e4f4fd1u, 0xa3dcdc7fu, 0x44222266u, 0x542a2a7eu, 0x3b9090abu, 0x0b888883u,
    0x8c4646cau, 0xc7eeee29u, 0x6bb8b8d3u, 0x2814143cu, 0xa7dede79u, 0xbc5e5ee2u, 0x160b0b1du, 0xaddbdb76u,
    0xdbe0e03bu, 0x64323256u, 0x743a3a4eu, 0x140a0a1eu, 0x924949dbu, 0x0c06060au, 0x4824246cu, 0xb85c5ce4u,
    0x9fc2c25du, 0xbdd3d36eu, 0x43acacefu, 0xc46262a6u, 0x399191a8u, 0x319595a4u, 0xd3e4e437u, 0xf279798bu,
    0xd5e7e732u, 0x8bc8c843u, 0x6e373759u, 0xda6d6db7u, 0x018d8d8cu, 0xb1d5d564u, 0x9c4e4ed2u, 0x49a9a9e0u,
    0xd86c6cb4u, 0xac5656fau, 0xf3f4f407u, 0xcfeaea25u, 0xca6565afu, 0xf47a7a8eu, 0x47aeaee9u, 0x10080818u,
    0x6fbabad5u, 0xf0787888u, 0x4a25256fu, 0x5c2e2e72u, 0x381c1c24u, 0x57a6a6f1u, 0x73b4b4c7u, 0x97c6c651u,
    0xcbe8e823u, 0xa1dddd7cu, 0xe874749cu, 0x3e1f1f21u, 0x964b4bddu, 0x61bdbddcu, 0x0d8b8b86u, 0x0f8a8a85u,
    0xe0707090u, 0x7c3e3e42u, 0x71b5b5c4u, 0xcc6666aau, 0x904848d8u, 0x06030305u, 0xf7f6f601u, 0x1c0e0e12u,
    0xc26161a3u, 0x6a35355fu, 0xae5757f9u, 0x69b9b9d0u, 0x17868691u, 0x99c1c158u, 0x3a1d1d27u, 0x279e9eb9u,
    0xd9e1e138u, 0xebf8f813u, 0x2b9898b3u, 0x22111133u, 0xd26969bbu, 0xa9d9d970u, 0x078e8e89u, 0x339494a7u,
    0x2d9b9bb6u, 0x3c1e1e22u, 0x15878792u, 0xc9e9e920u, 0x87cece49u, 0xaa5555ffu, 0x50282878u, 0xa5dfdf7au,
    0x038c8c8fu, 0x59a1a1f8u, 0x09898980u, 0x1a0d0d17u, 0x65bfbfdau, 0xd7e6e631u, 0x844242c6u, 0xd06868b8u,
    0x824141c3u, 0x299999b0u, 0x5a2d2d77u, 0x1e0f0f11u, 0x7bb0b0cbu, 0xa85454fcu, 0x6dbbbbd6u, 0x2c16163au,
};

__device__ const u32 LITE_TD0[256] = {
    0x51f4a750u, 0x7e416553u, 0x1a17a4c3u, 0x3a275e96u, 0x3bab6bcbu, 0x1f9d45f1u, 0xacfa58abu, 0x4be30393u,
    0x2030fa55u, 0xad766df6u, 0x88cc7691u, 0xf5024c25u, 0x4fe5d7fcu, 0xc52acbd7u, 0x26354480u, 0xb562a38fu,
    0xdeb15a49u, 0x25ba1b67u, 0x45ea0e98u, 0x5dfec0e1u, 0xc32f7502u, 0x814cf012u, 0x8d4697a3u, 0x6bd3f9c6u,
    0x038f5fe7u, 0x15929c95u, 0xbf6d7aebu, 0x955259dau, 0xd4be832du, 0x587421d3u, 0x49e06929u, 0x8ec9c844u,
    0x75c2896au, 0xf48e7978u, 0x99583e6bu, 0x27b971ddu, 0xbee14fb6u, 0xf088ad17u, 0xc920ac66u, 0x7dce3ab4u,
    0x63df4a18u, 0xe51a3182u, 0x97513360u, 0x62537f45u, 0xb16477e0u, 0xbb6bae84u, 0xfe81a01cu, 0xf9082b94u,
    0x70486858u, 0x8f45fd19u, 0x94de6c87u, 0x527bf8b7u, 0xab73d323u, 0x724b02e2u, 0xe31f8f57u, 0x6655ab2au,
    0xb2eb2807u, 0x2fb5c203u, 0x86c57b9au, 0xd33708a5u, 0x302887f2u, 0x23bfa5b2u, 0x02036abau, 0xed16825cu,
    0x8acf1c2bu, 0xa779b492u, 0xf307f2f0u, 0x4e69e2a1u, 0x65daf4cdu, 0x0605bed5u, 0xd134621fu, 0xc4a6fe8au,
    0x342e539du, 0xa2f355a0u, 0x058ae132u, 0xa4f6eb75u, 0x0b83ec39u, 0x4060efaau, 0x5e719f06u, 0xbd6e1051u,
    0x3e218af9u, 0x96dd063du, 0xdd3e05aeu, 0x4de6bd46u, 0x91548db5u, 0x71c45d05u, 0x0406d46fu, 0x605015ffu,
    0x1998fb24u, 0xd6bde997u, 0x894043ccu, 0x67d99e77u, 0xb0e842bdu, 0x07898b88u, 0xe7195b38u, 0x79c8eedbu,
    0xa17c0a47u, 0x7c420fe9u, 0xf8841ec9u, 0x00000000u, 0x09808683u, 0x322bed48u, 0x1e1170acu, 0x6c5a724eu,
    0xfd0efffbu, 0x0f853856u, 0x3daed51eu, 0x362d3927u, 0x0a0fd964u, 0x685ca621u, 0x9b5b54d1u, 0x24362e3au,
    0x0c0a67b1u, 0x9357e70fu, 0xb4ee96d2u, 0x1b9b919eu, 0x80c0c54fu, 0x61dc20a2u, 0x5a774b69u, 0x1c121a16u,
    0xe293ba0au, 0xc0a02ae5u, 0x3c22e043u, 0x121b171du, 0x0e090d0bu, 0xf28bc7adu, 0x2db6a8b9u, 0x141ea9c8u,
    0x57f11985u, 0xaf75074cu, 0xee99ddbbu, 0xa37f60fdu, 0xf701269fu, 0x5c72f5bcu, 0x44663bc5u, 0x5bfb7e34u,
    0x8b432976u, 0xcb23c6dcu, 0xb6edfc68u, 0xb8e4f163u, 0xd731dccau, 0x42638510u, 0x13972240u, 0x84c61120u,
    0x854a247du, 0xd2bb3df8u, 0xaef93211u, 0xc729a16du, 0x1d9e2f4bu, 0xdcb230f3u, 0x0d8652ecu, 0x77c1e3d0u,
    0x2bb3166cu, 0xa970b999u, 0x119448fau, 0x47e96422u, 0xa8fc8cc4u, 0xa0f03f1au, 0x567d2cd8u, 0x223390efu,
    0x87494ec7u, 0xd938d1c1u, 0x8ccaa2feu, 0x98d40b36u, 0xa6f581cfu, 0xa57ade28u, 0xdab78e26u, 0x3fadbfa4u,
    0x2c3a9de4u, 0x5078920du, 0x6a5fcc9bu, 0x547e4662u, 0xf68d13c2u, 0x90d8b8e8u, 0x2e39f75eu, 0x82c3aff5u,
    0x9f5d80beu, 0x69d0937cu, 0x6fd52da9u, 0xcf2512b3u, 0xc8ac993bu, 0x10187da7u, 0xe89c636eu, 0xdb3bbb7bu,
    0xcd267809u, 0x6e5918f4u, 0xec9ab701u, 0x834f9aa8u, 0xe6956e65u, 0xaaffe67eu, 0x21bccf08u, 0xef15e8e6u,
    0xbae79bd9u, 0x4a6f36ceu, 0xea9f09d4u, 0x29b07cd6u, 0x31a4b2afu, 0x2a3f2331u, 0xc6a59430u, 0x35a266c0u,
    0x744ebc37u, 0xfc82caa6u, 0xe090d0b0u, 0x33a7d815u, 0xf104984au, 0x41ecdaf7u, 0x7fcd500eu, 0x1791f62fu,
    0x764dd68du, 0x43efb04du, 0xccaa4d54u, 0xe49604dfu, 0x9ed1b5e3u, 0x4c6a881bu, 0xc12c1fb8u, 0x4665517fu,
    0x9d5eea04u, 0x018c355du, 0xfa877473u, 0xfb0b412eu, 0xb3671d5au, 0x92dbd252u, 0xe9105633u, 0x6dd64713u,
    0x9ad7618cu, 0x37a10c7au, 0x59f8148eu, 0xeb133c89u, 0xcea927eeu, 0xb761c935u, 0xe11ce5edu, 0x7a47b13cu,
    0x9cd2df59u, 0x55f2733fu, 0x1814ce79u, 0x73c737bfu, 0x53f7cdeau, 0x5ffdaa5bu, 0xdf3d6f14u, 0x7844db86u,
    0xcaaff381u, 0xb968c43eu, 0x3824342cu, 0xc2a3405fu, 0x161dc372u, 0xbce2250cu, 0x283c498bu, 0xff0d9541u,
    0x39a80171u, 0x080cb3deu, 0xd8b4e49cu, 0x6456c190u, 0x7bcb8461u, 0xd532b670u, 0x486c5c74u, 0xd0b85742u,
};

__device__ const unsigned char LITE_TD4[256] = {
    0x52, 0x09, 0x6a, 0xd5, 0x30, 0x36, 0xa5, 0x38,
    0xbf, 0x40, 0xa3, 0x9e, 0x81, 0xf3, 0xd7, 0xfb,
    0x7c, 0xe3, 0x39, 0x82, 0x9b, 0x2f, 0xff, 0x87,
    0x34, 0x8e, 0x43, 0x44, 0xc4, 0xde, 0xe9, 0xcb,
    0x54, 0x7b, 0x94, 0x32, 0xa6, 0xc2, 0x23, 0x3d,
    0xee, 0x4c, 0x95, 0x0b, 0x42, 0xfa, 0xc3, 0x4e,
    0x08, 0x2e, 0xa1, 0x66, 0x28, 0xd9, 0x24, 0xb2,
    0x76, 0x5b, 0xa2, 0x49, 0x6d, 0x8b, 0xd1, 0x25,
    0x72, 0xf8, 0xf6, 0x64, 0x86, 0x68, 0x98, 0x16,
    0xd4, 0xa4, 0x5c, 0xcc, 0x5d, 0x65, 0xb6, 0x92,
    0x6c, 0x70, 0x48, 0x50, 0xfd, 0xed, 0xb9, 0xda,
    0x5e, 0x15, 0x46, 0x57, 0xa7, 0x8d, 0x9d, 0x84,
    0x90, 0xd8, 0xab, 0x00, 0x8c, 0xbc, 0xd3, 0x0a,
    0xf7, 0xe4, 0x58, 0x05, 0xb8, 0xb3, 0x45, 0x06,
    0xd0, 0x2c, 0x1e, 0x8f, 0xca, 0x3f, 0x0f, 0x02,
    0xc1, 0xaf, 0xbd, 0x03, 0x01, 0x13, 0x8a, 0x6b,
    0x3a, 0x91, 0x11, 0x41, 0x4f, 0x67, 0xdc, 0xea,
    0x97, 0xf2, 0xcf, 0xce, 0xf0, 0xb4, 0xe6, 0x73,
    0x96, 0xac, 0x74, 0x22, 0xe7, 0xad, 0x35, 0x85,
    0xe2, 0xf9, 0x37, 0xe8, 0x1c, 0x75, 0xdf, 0x6e,
    0x47, 0xf1, 0x1a, 0x71, 0x1d, 0x29, 0xc5, 0x89,
    0x6f, 0xb7, 0x62, 0x0e, 0xaa, 0x18, 0xbe, 0x1b,
    0xfc, 0x56, 0x3e, 0x4b, 0xc6, 0xd2, 0x79, 0x20,
    0x9a, 0xdb, 0xc0, 0xfe, 0x78, 0xcd, 0x5a, 0xf4,
    0x1f, 0xdd, 0xa8, 0x33, 0x88, 0x07, 0xc7, 0x31,
    0xb1, 0x12, 0x10, 0x59, 0x27, 0x80, 0xec, 0x5f,
    0x60, 0x51, 0x7f, 0xa9, 0x19, 0xb5, 0x4a, 0x0d,
    0x2d, 0xe5, 0x7a, 0x9f, 0x93, 0xc9, 0x9c, 0xef,
    0xa0, 0xe0, 0x3b, 0x4d, 0xae, 0x2a, 0xf5, 0xb0,
    0xc8, 0xeb, 0xbb, 0x3c, 0x83, 0x53, 0x99, 0x61,
    0x17, 0x2b, 0x04, 0x7e, 0xba, 0x77, 0xd6, 0x26,
    0xe1, 0x69, 0x14, 0x63, 0x55, 0x21, 0x0c, 0x7d,
};

// The nine middle rounds are a loop (`#pragma unroll 1`): straight-line code, as OpenSSL's,
// would make every round key a constant-bank operand but multiplied lite.cu's NVRTC compile time
// by ten (docs/lite.md).

// ---- tables ----------------------------------------------------------------------------------

RHEA_INLINE u32 lite_ror(u32 x, u32 s) { return __funnelshift_r(x, x, s); }

// Copies the tables into shared memory; every thread of the block calls it, before any
// divergence (it ends with __syncthreads()). Reads only the module's constant tables, so a kernel
// launched with PDL may call it before pdl_wait().
RHEA_INLINE void lite_load_tables(LiteTables& T) {
    const u32 threads = blockDim.x * blockDim.y * blockDim.z;
    const u32 tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    for (u32 i = tid; i < 256; i += threads) {
        const u32 e = LITE_TE0[i];
        const u32 d = LITE_TD0[i];
        T.te[0][i] = e;
        T.te[1][i] = lite_ror(e, 8);
        T.te[2][i] = lite_ror(e, 16);
        T.te[3][i] = lite_ror(e, 24);
        T.td[0][i] = d;
        T.td[1][i] = lite_ror(d, 8);
        T.td[2][i] = lite_ror(d, 16);
        T.td[3][i] = lite_ror(d, 24);
        T.td4[i] = LITE_TD4[i];
    }
    __syncthreads();
}

// ---- AES-128 on big-endian state words (OpenSSL's AES_encrypt / AES_decrypt) ------------------

RHEA_INLINE uint4 lite_aes_encrypt_words(const LiteTables& T, const u32 (&rk)[44], uint4 in) {
    u32 s0 = in.x ^ rk[0], s1 = in.y ^ rk[1], s2 = in.z ^ rk[2], s3 = in.w ^ rk[3];
#pragma unroll 1
    for (int r = 1; r < 10; ++r) {
        const u32 t0 = T.te[0][s0 >> 24] ^ T.te[1][(s1 >> 16) & 0xff] ^ T.te[2][(s2 >> 8) & 0xff] ^
                       T.te[3][s3 & 0xff] ^ rk[4 * r];
        const u32 t1 = T.te[0][s1 >> 24] ^ T.te[1][(s2 >> 16) & 0xff] ^ T.te[2][(s3 >> 8) & 0xff] ^
                       T.te[3][s0 & 0xff] ^ rk[4 * r + 1];
        const u32 t2 = T.te[0][s2 >> 24] ^ T.te[1][(s3 >> 16) & 0xff] ^ T.te[2][(s0 >> 8) & 0xff] ^
                       T.te[3][s1 & 0xff] ^ rk[4 * r + 2];
        const u32 t3 = T.te[0][s3 >> 24] ^ T.te[1][(s0 >> 16) & 0xff] ^ T.te[2][(s1 >> 8) & 0xff] ^
                       T.te[3][s2 & 0xff] ^ rk[4 * r + 3];
        s0 = t0; s1 = t1; s2 = t2; s3 = t3;
    }
    uint4 out;
    out.x = (T.te[2][s0 >> 24] & 0xff000000u) ^ (T.te[3][(s1 >> 16) & 0xff] & 0x00ff0000u) ^
            (T.te[0][(s2 >> 8) & 0xff] & 0x0000ff00u) ^ (T.te[1][s3 & 0xff] & 0x000000ffu) ^ rk[40];
    out.y = (T.te[2][s1 >> 24] & 0xff000000u) ^ (T.te[3][(s2 >> 16) & 0xff] & 0x00ff0000u) ^
            (T.te[0][(s3 >> 8) & 0xff] & 0x0000ff00u) ^ (T.te[1][s0 & 0xff] & 0x000000ffu) ^ rk[41];
    out.z = (T.te[2][s2 >> 24] & 0xff000000u) ^ (T.te[3][(s3 >> 16) & 0xff] & 0x00ff0000u) ^
            (T.te[0][(s0 >> 8) & 0xff] & 0x0000ff00u) ^ (T.te[1][s1 & 0xff] & 0x000000ffu) ^ rk[42];
    out.w = (T.te[2][s3 >> 24] & 0xff000000u) ^ (T.te[3][(s0 >> 16) & 0xff] & 0x00ff0000u) ^
            (T.te[0][(s1 >> 8) & 0xff] & 0x0000ff00u) ^ (T.te[1][s2 & 0xff] & 0x000000ffu) ^ rk[43];
    return out;
}

RHEA_INLINE uint4 lite_aes_decrypt_words(const LiteTables& T, const u32 (&rk)[44], uint4 in) {
    u32 s0 = in.x ^ rk[0], s1 = in.y ^ rk[1], s2 = in.z ^ rk[2], s3 = in.w ^ rk[3];
#pragma unroll 1
    for (int r = 1; r < 10; ++r) {
        const u32 t0 = T.td[0][s0 >> 24] ^ T.td[1][(s3 >> 16) & 0xff] ^ T.td[2][(s2 >> 8) & 0xff] ^
                       T.td[3][s1 & 0xff] ^ rk[4 * r];
        const u32 t1 = T.td[0][s1 >> 24] ^ T.td[1][(s0 >> 16) & 0xff] ^ T.td[2][(s3 >> 8) & 0xff] ^
                       T.td[3][s2 & 0xff] ^ rk[4 * r + 1];
        const u32 t2 = T.td[0][s2 >> 24] ^ T.td[1][(s1 >> 16) & 0xff] ^ T.td[2][(s0 >> 8) & 0xff] ^
                       T.td[3][s3 & 0xff] ^ rk[4 * r + 2];
        const u32 t3 = T.td[0][s3 >> 24] ^ T.td[1][(s2 >> 16) & 0xff] ^ T.td[2][(s1 >> 8) & 0xff] ^
                       T.td[3][s0 & 0xff] ^ rk[4 * r + 3];
        s0 = t0; s1 = t1; s2 = t2; s3 = t3;
    }
    const unsigned char* s = T.td4;
    uint4 out;
    out.x = ((u32)s[s0 >> 24] << 24) ^ ((u32)s[(s3 >> 16) & 0xff] << 16) ^
            ((u32)s[(s2 >> 8) & 0xff] << 8) ^ (u32)s[s1 & 0xff] ^ rk[40];
    out.y = ((u32)s[s1 >> 24] << 24) ^ ((u32)s[(s0 >> 16) & 0xff] << 16) ^
            ((u32)s[(s3 >> 8) & 0xff] << 8) ^ (u32)s[s2 & 0xff] ^ rk[41];
    out.z = ((u32)s[s2 >> 24] << 24) ^ ((u32)s[(s1 >> 16) & 0xff] << 16) ^
            ((u32)s[(s0 >> 8) & 0xff] << 8) ^ (u32)s[s3 & 0xff] ^ rk[42];
    out.w = ((u32)s[s3 >> 24] << 24) ^ ((u32)s[(s2 >> 16) & 0xff] << 16) ^
            ((u32)s[(s1 >> 8) & 0xff] << 8) ^ (u32)s[s0 & 0xff] ^ rk[43];
    return out;
}

// ---- blocks in memory byte order --------------------------------------------------------------
// A uint4 here is a block as a 16-byte load gives it: x holds bytes 0..3 little-endian, so the
// AES state word s0 (bytes 0..3 big-endian) is its byte swap.

RHEA_INLINE u32 lite_bswap(u32 x) { return __byte_perm(x, 0, 0x0123); }
RHEA_INLINE uint4 lite_bswap4(uint4 v) {
    return make_uint4(lite_bswap(v.x), lite_bswap(v.y), lite_bswap(v.z), lite_bswap(v.w));
}
RHEA_INLINE uint4 lite_xor4(uint4 a, uint4 b) {
    return make_uint4(a.x ^ b.x, a.y ^ b.y, a.z ^ b.z, a.w ^ b.w);
}

// AES-128 of a block in memory byte order with the schedule rk.
RHEA_INLINE uint4 lite_aes_encrypt_block(const LiteTables& T, const u32 (&rk)[44], uint4 m) {
    return lite_bswap4(lite_aes_encrypt_words(T, rk, lite_bswap4(m)));
}
RHEA_INLINE uint4 lite_aes_decrypt_block(const LiteTables& T, const u32 (&rk)[44], uint4 m) {
    return lite_bswap4(lite_aes_decrypt_words(T, rk, lite_bswap4(m)));
}

// ---- (a) XTS-AES-128 (IEEE 1619) ---------------------------------------------------------------

// t · α in GF(2^128), on the 16-byte little-endian representation (IEEE 1619 §5.2).
RHEA_INLINE uint4 lite_xts_mul_alpha(uint4 t) {
    const u32 carry = (t.w >> 31) ? 0x87u : 0u;
    return make_uint4((t.x << 1) ^ carry, (t.y << 1) | (t.x >> 31), (t.z << 1) | (t.y >> 31),
                      (t.w << 1) | (t.z >> 31));
}

// The tweak T_j = AES_K2(i) · α^j of block j of the data unit with tweak value i = hi·2^64 + lo.
RHEA_INLINE uint4 lite_xts_tweak(const LiteTables& T, const LiteKeys& K, u64 lo, u64 hi, u32 j) {
    uint4 t = make_uint4((u32)lo, (u32)(lo >> 32), (u32)hi, (u32)(hi >> 32));
    t = lite_aes_encrypt_block(T, K.k2_enc, t);
    for (u32 k = 0; k < j; ++k) t = lite_xts_mul_alpha(t);
    return t;
}

// C = AES_K1(P ⊕ T) ⊕ T and its inverse, for the tweak T of the block.
RHEA_INLINE uint4 lite_xts_encrypt(const LiteTables& T, const LiteKeys& K, uint4 p, uint4 tw) {
    return lite_xor4(lite_aes_encrypt_block(T, K.k1_enc, lite_xor4(p, tw)), tw);
}
RHEA_INLINE uint4 lite_xts_decrypt(const LiteTables& T, const LiteKeys& K, uint4 c, uint4 tw) {
    return lite_xor4(lite_aes_decrypt_block(T, K.k1_dec, lite_xor4(c, tw)), tw);
}

// ---- (b) the memory form: one data unit per 16-byte block, tweak value = address / 16 ---------

RHEA_INLINE uint4 lite_tweak_at(const LiteTables& T, const LiteKeys& K, u64 addr) {
    return lite_xts_tweak(T, K, addr >> 4, 0, 0);
}
// The ciphertext of plaintext block p stored at the 16-byte aligned device address addr.
RHEA_INLINE uint4 lite_encrypt_block_at(const LiteTables& T, const LiteKeys& K, u64 addr,
                                        uint4 p) {
    return lite_xts_encrypt(T, K, p, lite_tweak_at(T, K, addr));
}
// The plaintext of ciphertext block c read from the 16-byte aligned device address addr.
RHEA_INLINE uint4 lite_decrypt_block_at(const LiteTables& T, const LiteKeys& K, u64 addr,
                                        uint4 c) {
    return lite_xts_decrypt(T, K, c, lite_tweak_at(T, K, addr));
}

// ---- loads and stores --------------------------------------------------------------------------
// Plain ld.global in volatile asm (as ld_dep in common.cuh): never moved above pdl_wait(), and
// issued in program order, so that a kernel controls when its loads leave (delayed shuffle).
// The helpers written in PTX are replaced by host versions in the CPU emulation
// (scripts/lite-emu.sh, LITE_HOST_EMULATION).

RHEA_INLINE void lite_st4(void* p, uint4 v) { *reinterpret_cast<uint4*>(p) = v; }

#ifndef LITE_HOST_EMULATION

RHEA_INLINE u32 lite_ld(const u32* p) {
    u32 r;
    asm volatile("ld.global.u32 %0, [%1];" : "=r"(r) : "l"(p));
    return r;
}
RHEA_INLINE u64 lite_ld(const u64* p) {
    u64 r;
    asm volatile("ld.global.u64 %0, [%1];" : "=l"(r) : "l"(p));
    return r;
}
RHEA_INLINE uint4 lite_ld4(const void* p) {
    uint4 r;
    asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
    return r;
}
// A compiler barrier that makes `p` depend on `v`: a load through the result is issued only once
// `v` is computed (kernels that decrypt each operand before loading the next: no delayed shuffle).
template <typename P, typename V>
RHEA_INLINE P lite_after(P p, V v) {
    u64 a = (u64)p;
    asm volatile("" : "+l"(a) : "l"((u64)v));
    return (P)a;
}

RHEA_INLINE u32 lite_laneid() {
    u32 l;
    asm("mov.u32 %0, %%laneid;" : "=r"(l));
    return l;
}
#endif  // LITE_HOST_EMULATION

// Words <-> blocks: word j of a block (u32: component j; u64: components 2j, 2j+1).
RHEA_INLINE uint4 lite_pack(const u32 (&w)[4]) { return make_uint4(w[0], w[1], w[2], w[3]); }
RHEA_INLINE uint4 lite_pack(const u64 (&w)[2]) {
    return make_uint4((u32)w[0], (u32)(w[0] >> 32), (u32)w[1], (u32)(w[1] >> 32));
}
template <typename W> RHEA_INLINE W lite_word(uint4 b, u32 j);
template <> RHEA_INLINE u32 lite_word<u32>(uint4 b, u32 j) {
    return j == 0 ? b.x : j == 1 ? b.y : j == 2 ? b.z : b.w;
}
template <> RHEA_INLINE u64 lite_word<u64>(uint4 b, u32 j) {
    return j == 0 ? ((u64)b.y << 32 | b.x) : ((u64)b.w << 32 | b.z);
}

// ---- the word-granular entry points (four u32 lanes or two u64 lanes form a block) ------------

// The plaintext of the word at p, whose ciphertext `v` this lane has already loaded (from p).
// See the word-granular contract at the top of the file; MASKED = false uses the full mask.
template <typename W, bool MASKED>
RHEA_INLINE W lite_decrypt_loaded(const LiteTables& T, const LiteKeys& K, const W* p, W v,
                                  u32 mask) {
    constexpr u32 G = 16 / sizeof(W);
    const u32 m = MASKED ? mask : 0xffffffffu;
    const u32 lane = lite_laneid();
    const u32 base = lane & ~(G - 1);
    const u64 addr = (u64)p & ~15ull;
    W w[G];
#pragma unroll
    for (u32 j = 0; j < G; ++j) {
        w[j] = __shfl_sync(m, v, base + j);
        if (MASKED && !((m >> (base + j)) & 1u)) {
            w[j] = lite_ld(reinterpret_cast<const W*>(addr) + j);  // the lane is absent: fetch
        }
    }
    return lite_word<W>(lite_decrypt_block_at(T, K, addr, lite_pack(w)), lane & (G - 1));
}

// lite_decrypt: load the word at p and decrypt it.
template <typename W, bool MASKED>
RHEA_INLINE W lite_decrypt(const LiteTables& T, const LiteKeys& K, const W* p, u32 mask) {
    return lite_decrypt_loaded<W, MASKED>(T, K, p, lite_ld(p), mask);
}

// lite_encrypt: the group's block receives each calling lane's word `v` (at p), encrypted; the
// words of lanes absent from `mask` keep their plaintext (read-modify-write of the block, done
// and stored whole by the group's first calling lane alone: a lane that stored its word while
// another still read the old block would corrupt it).
template <typename W, bool MASKED>
RHEA_INLINE void lite_encrypt(const LiteTables& T, const LiteKeys& K, W* p, W v, u32 mask) {
    constexpr u32 G = 16 / sizeof(W);
    const u32 m = MASKED ? mask : 0xffffffffu;
    const u32 lane = lite_laneid();
    const u32 base = lane & ~(G - 1);
    const u64 addr = (u64)p & ~15ull;
    const u32 present = (m >> base) & ((1u << G) - 1);
    W w[G];
#pragma unroll
    for (u32 j = 0; j < G; ++j) w[j] = __shfl_sync(m, v, base + j);
    if (MASKED && present != (1u << G) - 1) {
        if ((lane & (G - 1)) != (u32)(__ffs(present) - 1)) return;
        const uint4 old = lite_decrypt_block_at(T, K, addr, lite_ld4((const void*)addr));
#pragma unroll
        for (u32 j = 0; j < G; ++j) {
            if (!((present >> j) & 1u)) w[j] = lite_word<W>(old, j);
        }
        lite_st4((void*)addr, lite_encrypt_block_at(T, K, addr, lite_pack(w)));
        return;
    }
    *p = lite_word<W>(lite_encrypt_block_at(T, K, addr, lite_pack(w)), lane & (G - 1));
}

// ---- the v4 entry points (one 16-byte block per thread) ----------------------------------------

RHEA_INLINE uint4 lite_decrypt_v4_loaded(const LiteTables& T, const LiteKeys& K, const void* p,
                                         uint4 c) {
    return lite_decrypt_block_at(T, K, (u64)p, c);
}
// The plaintext of the 16-byte aligned block at p.
RHEA_INLINE uint4 lite_decrypt_v4(const LiteTables& T, const LiteKeys& K, const void* p) {
    return lite_decrypt_v4_loaded(T, K, p, lite_ld4(p));
}
// Stores the ciphertext of plaintext block v at the 16-byte aligned address p.
RHEA_INLINE void lite_encrypt_v4(const LiteTables& T, const LiteKeys& K, void* p, uint4 v) {
    lite_st4(p, lite_encrypt_block_at(T, K, (u64)p, v));
}

// ---- irregular access -------------------------------------------------------------------------

// The word at p (any address) of unpadded read-only data: the block around it is decrypted.
template <typename W>
RHEA_INLINE W lite_load_word(const LiteTables& T, const LiteKeys& K, const W* p) {
    const u64 addr = (u64)p & ~15ull;
    const u32 j = (u32)(((u64)p & 15u) / sizeof(W));
    return lite_word<W>(lite_decrypt_v4(T, K, (const void*)addr), j);
}

// Padded data: element i of a padded u64 array is alone in 16-byte block i (its first 8 bytes;
// the other 8 are zero plaintext), so one thread reads or writes it without touching another's.
RHEA_INLINE u64 lite_read_padded(const LiteTables& T, const LiteKeys& K, const uint4* base,
                                 u64 i) {
    return lite_word<u64>(lite_decrypt_v4(T, K, base + i), 0);
}
RHEA_INLINE void lite_write_padded(const LiteTables& T, const LiteKeys& K, uint4* base, u64 i,
                                   u64 v) {
    lite_encrypt_v4(T, K, base + i, make_uint4((u32)v, (u32)(v >> 32), 0u, 0u));
}
