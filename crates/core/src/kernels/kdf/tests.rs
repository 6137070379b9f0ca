//! The derivations against their RFCs' vectors, through the registry as a
//! task runs them; their parameter checks; cancellation between
//! iterations.

use std::sync::atomic::AtomicBool;

use crate::input::Input;
use crate::kernels::{
    find, get, KernelError, ParamError, Params, RawParams, RawValue, RunContext, Sink,
};

fn unhex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

fn params(name: &str, raw: Vec<(&'static str, RawValue<'static>)>) -> Result<Params, ParamError> {
    get(find(name).unwrap()).unwrap().params(&RawParams::new(raw))
}

fn derive_with(
    name: &str,
    p: &Params,
    secret: &[u8],
    flag: &AtomicBool,
) -> Result<Vec<u8>, KernelError> {
    let mut out = Sink::new(usize::MAX);
    let input = Input::Owned(secret.to_vec());
    get(find(name).unwrap()).unwrap().run(p, &input, &RunContext::new(flag), &mut out)?;
    Ok(out.into_output().as_bytes().to_vec())
}

fn derive(name: &str, raw: Vec<(&'static str, RawValue<'static>)>, secret: &[u8]) -> Vec<u8> {
    derive_with(name, &params(name, raw).unwrap(), secret, &AtomicBool::new(false)).unwrap()
}

fn n(v: f64) -> RawValue<'static> {
    RawValue::Number(v)
}

fn leak(bytes: Vec<u8>) -> RawValue<'static> {
    RawValue::Bytes(Box::leak(bytes.into_boxed_slice()))
}

#[test]
fn pbkdf2_rfc6070_and_rfc7914() {
    // RFC 6070 (PBKDF2-HMAC-SHA1).
    let cases: [(&[u8], &[u8], f64, &str); 4] = [
        (b"password", b"salt", 1.0, "0c60c80f961f0e71f3a9b524af6012062fe037a6"),
        (b"password", b"salt", 4096.0, "4b007901b765489abead49d926f721d065a429c1"),
        (
            b"passwordPASSWORDpassword",
            b"saltSALTsaltSALTsaltSALTsaltSALTsalt",
            4096.0,
            "3d2eec4fe41c849b80c8d83662c0e44a8b291a964cf2f07038",
        ),
        (b"pass\0word", b"sa\0lt", 4096.0, "56fa6aa75548099dcc37d7f03425e0c3"),
    ];
    for (password, salt, iterations, want) in cases {
        let want = unhex(want);
        let raw = vec![
            ("digest", RawValue::Text("sha1")),
            ("salt", leak(salt.to_vec())),
            ("iterations", n(iterations)),
            ("keylen", n(want.len() as f64)),
        ];
        assert_eq!(derive("pbkdf2", raw, password), want);
    }
    // RFC 7914, section 11: PBKDF2-HMAC-SHA256, two blocks.
    let raw = vec![
        ("digest", RawValue::Text("sha256")),
        ("salt", leak(b"salt".to_vec())),
        ("iterations", n(1.0)),
        ("keylen", n(64.0)),
    ];
    let want = unhex(
        "55 ac 04 6e 56 e3 08 9f ec 16 91 c2 25 44 b6 05 f9 41 85 21 6d de 04 65 e6 8b 9d 57 c2 0d ac bc
         49 ca 9c cc f1 79 b6 45 99 16 64 b3 9d 77 ef 31 7c 71 b8 45 b1 e3 0b d5 09 11 20 41 d3 a1 97 83",
    );
    assert_eq!(derive("pbkdf2", raw, b"passwd"), want);
}

#[test]
fn scrypt_rfc7914() {
    // (password, salt, N, r, p, key)
    type Case = (&'static [u8], &'static [u8], f64, f64, f64, &'static str);
    let cases: [Case; 2] = [
        (
            b"",
            b"",
            16.0,
            1.0,
            1.0,
            "77 d6 57 62 38 65 7b 20 3b 19 ca 42 c1 8a 04 97 f1 6b 48 44 e3 07 4a e8 df df fa 3f ed e2 14 42
             fc d0 06 9d ed 09 48 f8 32 6a 75 3a 0f c8 1f 17 e8 d3 e0 fb 2e 0d 36 28 cf 35 e2 0c 38 d1 89 06",
        ),
        (
            b"password",
            b"NaCl",
            1024.0,
            8.0,
            16.0,
            "fd ba be 1c 9d 34 72 00 78 56 e7 19 0d 01 e9 fe 7c 6a d7 cb c8 23 78 30 e7 73 76 63 4b 37 31 62
             2e af 30 d9 2e 22 a3 88 6f f1 09 27 9d 98 30 da c7 27 af b9 4a 83 ee 6d 83 60 cb df a2 cc 06 40",
        ),
    ];
    for (password, salt, big_n, r, p, want) in cases {
        let want = unhex(want);
        let raw = vec![
            ("salt", leak(salt.to_vec())),
            ("N", n(big_n)),
            ("r", n(r)),
            ("p", n(p)),
            ("keylen", n(64.0)),
        ];
        assert_eq!(derive("scrypt", raw, password), want);
    }
}

#[test]
fn hkdf_rfc5869() {
    // Test cases 1 (SHA-256) and 4 (SHA-1).
    let ikm = unhex("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b");
    let raw = vec![
        ("digest", RawValue::Text("sha256")),
        ("salt", leak(unhex("000102030405060708090a0b0c"))),
        ("info", leak(unhex("f0f1f2f3f4f5f6f7f8f9"))),
        ("keylen", n(42.0)),
    ];
    let want = unhex(
        "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865",
    );
    assert_eq!(derive("hkdf", raw, &ikm), want);
    let raw = vec![
        ("digest", RawValue::Text("sha1")),
        ("salt", leak(unhex("000102030405060708090a0b0c"))),
        ("info", leak(unhex("f0f1f2f3f4f5f6f7f8f9"))),
        ("keylen", n(42.0)),
    ];
    let want = unhex(
        "085a01ea1b10f36933068b56efa5ad81a4f14b822f5b091568a9cdd4f155fda2c22e422478d305f3f896",
    );
    assert_eq!(derive("hkdf", raw, &ikm[..11]), want);
}

#[test]
fn an_empty_key_is_derived_empty() {
    let pbkdf2 =
        vec![("digest", RawValue::Text("sha256")), ("iterations", n(1.0)), ("keylen", n(0.0))];
    assert!(derive("pbkdf2", pbkdf2, b"pw").is_empty());
    let scrypt = vec![("N", n(16.0)), ("r", n(1.0)), ("p", n(1.0)), ("keylen", n(0.0))];
    assert!(derive("scrypt", scrypt, b"pw").is_empty());
    let hkdf = vec![("digest", RawValue::Text("sha256")), ("keylen", n(0.0))];
    assert!(derive("hkdf", hkdf, b"pw").is_empty());
}

#[test]
fn parameters_past_their_limits_are_refused() {
    let digest = || ("digest", RawValue::Text("sha256"));
    assert!(params("pbkdf2", vec![digest(), ("iterations", n(0.0)), ("keylen", n(1.0))]).is_err());
    assert!(params("pbkdf2", vec![("iterations", n(1.0)), ("keylen", n(1.0))]).is_err());
    assert!(params(
        "pbkdf2",
        vec![("digest", RawValue::Text("sha3-256")), ("iterations", n(1.0)), ("keylen", n(1.0))]
    )
    .is_err());
    assert!(params("pbkdf2", vec![digest(), ("iterations", n(1.0)), ("keylen", n(2f64.powi(31)))])
        .is_err());
    // HKDF: at most 255 blocks, and 1024 bytes of info.
    assert!(params("hkdf", vec![digest(), ("keylen", n(255.0 * 32.0))]).is_ok());
    assert!(params("hkdf", vec![digest(), ("keylen", n(255.0 * 32.0 + 1.0))]).is_err());
    assert!(
        params("hkdf", vec![digest(), ("info", leak(vec![0; 1025])), ("keylen", n(1.0))]).is_err()
    );
    // scrypt: N a power of 2 above 1, r and p at least 1, r × p under 2^30.
    let scrypt = |big_n: f64, r: f64, p: f64| {
        params("scrypt", vec![("N", n(big_n)), ("r", n(r)), ("p", n(p)), ("keylen", n(1.0))])
    };
    assert!(scrypt(16.0, 1.0, 1.0).is_ok());
    for (big_n, r, p) in [
        (1.0, 1.0, 1.0),
        (24.0, 1.0, 1.0),
        (16.0, 0.0, 1.0),
        (16.0, 1.0, 0.0),
        (16.0, 1024.0, 1048576.0),
    ] {
        assert!(scrypt(big_n, r, p).is_err(), "N={big_n} r={r} p={p}");
    }
}

#[test]
fn scrypt_memory_it_cannot_have_is_the_tasks_error() {
    // 128 × 8 × 2^40 bytes: no allocator hands that out; the process lives.
    let raw = vec![("N", n(2f64.powi(40))), ("r", n(8.0)), ("p", n(1.0)), ("keylen", n(8.0))];
    let err =
        derive_with("scrypt", &params("scrypt", raw).unwrap(), b"pw", &AtomicBool::new(false));
    assert!(matches!(err, Err(KernelError::InvalidInput(m)) if m.contains("could not allocate")));
}

#[test]
fn pbkdf2_stops_when_cancelled() {
    let raw = vec![
        ("digest", RawValue::Text("sha256")),
        ("iterations", n(i32::MAX as f64)),
        ("keylen", n(32.0)),
    ];
    let p = params("pbkdf2", raw).unwrap();
    // Raised before the run: the first check, after 1024 iterations, stops it
    // (2^31 iterations would take minutes).
    assert_eq!(
        derive_with("pbkdf2", &p, b"pw", &AtomicBool::new(true)),
        Err(KernelError::Cancelled)
    );
}

#[test]
fn argon2_rfc9106() {
    // RFC 9106, section 5: t = 3, m = 32 KiB, p = 4, a 32-byte tag.
    let cases = [
        ("argon2d", "512b391b6f1162975371d30919734294f868e3be3984f3c1a13a4db9fabe4acb"),
        ("argon2i", "c814d9d1dc7f37aa13f0d77f2494bda1c8de6b016dd388d29952a4c4672b6ce8"),
        ("argon2id", "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659"),
    ];
    for (name, want) in cases {
        let raw = vec![
            ("nonce", leak(vec![2; 16])),
            ("parallelism", n(4.0)),
            ("tagLength", n(32.0)),
            ("memory", n(32.0)),
            ("passes", n(3.0)),
            ("secret", leak(vec![3; 8])),
            ("associatedData", leak(vec![4; 12])),
        ];
        assert_eq!(derive(name, raw, &[1; 32]), unhex(want), "{name}");
    }
}

#[test]
fn argon2_limits_and_memory() {
    let raw = |nonce: usize, p: f64, tag: f64, m: f64, t: f64, ad: usize| {
        vec![
            ("nonce", leak(vec![0; nonce])),
            ("parallelism", n(p)),
            ("tagLength", n(tag)),
            ("memory", n(m)),
            ("passes", n(t)),
            ("associatedData", leak(vec![0; ad])),
        ]
    };
    assert!(params("argon2id", raw(8, 1.0, 4.0, 8.0, 1.0, 32)).is_ok());
    // Associated data of any length (the reference's limit is 2^32 - 1).
    assert!(params("argon2id", raw(8, 1.0, 4.0, 8.0, 1.0, 1000)).is_ok());
    for bad in [
        raw(7, 1.0, 4.0, 8.0, 1.0, 0),
        raw(8, 0.0, 4.0, 8.0, 1.0, 0),
        raw(8, 2.0, 4.0, 15.0, 1.0, 0),
        raw(8, 1.0, 3.0, 8.0, 1.0, 0),
        raw(8, 1.0, 4.0, 8.0, 0.0, 0),
        raw(8, 16777216.0, 4.0, 2f64.powi(32) - 1.0, 1.0, 0),
    ] {
        assert!(params("argon2id", bad).is_err());
    }
    // 19 MiB (OWASP's): the task's working memory, by the kernel's word.
    let p = params("argon2id", raw(16, 1.0, 32.0, 19456.0, 2.0, 0)).unwrap();
    assert_eq!(get(find("argon2id").unwrap()).unwrap().working_bytes(&p), 19456 * 1024);
    let p = params(
        "scrypt",
        vec![("N", n(16384.0)), ("r", n(8.0)), ("p", n(1.0)), ("keylen", n(64.0))],
    )
    .unwrap();
    assert_eq!(get(find("scrypt").unwrap()).unwrap().working_bytes(&p), 128 * 8 * (16384 + 1));
}

#[test]
fn bcrypt_openwall_vectors() {
    // crypt_blowfish's test vectors (Openwall), cost 5; past 72 bytes a
    // password is not read.
    let cases: [(&[u8], &str); 5] = [
        (b"U*U", "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"),
        (b"U*U*", "$2a$05$CCCCCCCCCCCCCCCCCCCCC.VGOzA784oUp/Z0DY336zx7pLYAy0lwK"),
        (b"U*U*U", "$2a$05$XXXXXXXXXXXXXXXXXXXXXOAcXxm9kjPGEMsLznoKqmqw7tc8WCx4a"),
        (
            b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789chars after 72 are ignored",
            "$2a$05$abcdefghijklmnopqrstuu5s2v8.iXieOjg/.AySBTTZIIVFJeBui",
        ),
        (b"", "$2a$05$CCCCCCCCCCCCCCCCCCCCC.7uG0VCzI2bS7j6ymqJi9CdcdxiRTWNy"),
    ];
    for (password, want) in cases {
        let parts: bcrypt::HashParts = want.parse().unwrap();
        let raw = vec![
            ("cost", n(parts.get_cost() as f64)),
            ("salt", leak(parts.get_salt_raw().to_vec())),
            ("version", RawValue::Text("2a")),
        ];
        assert_eq!(String::from_utf8(derive("bcrypt", raw, password)).unwrap(), want);
    }
    // The default version is 2b; 2y names the same computation.
    let raw = |version: Option<&'static str>| {
        let mut raw = vec![("cost", n(4.0)), ("salt", leak(vec![7; 16]))];
        if let Some(v) = version {
            raw.push(("version", RawValue::Text(v)));
        }
        String::from_utf8(derive("bcrypt", raw, b"pw")).unwrap()
    };
    let b = raw(None);
    assert!(b.starts_with("$2b$04$"));
    assert_eq!(raw(Some("2y"))[3..], b[3..]);
    assert!(params("bcrypt", vec![("cost", n(3.0)), ("salt", leak(vec![0; 16]))]).is_err());
    assert!(params("bcrypt", vec![("cost", n(32.0)), ("salt", leak(vec![0; 16]))]).is_err());
    assert!(params("bcrypt", vec![("cost", n(4.0)), ("salt", leak(vec![0; 15]))]).is_err());
    assert!(params(
        "bcrypt",
        vec![("cost", n(4.0)), ("salt", leak(vec![0; 16])), ("version", RawValue::Text("2x"))]
    )
    .is_err());
}

#[test]
fn argon2_version_16_differs_and_others_are_refused() {
    let raw = |version: Option<f64>| {
        let mut raw = vec![
            ("nonce", leak(vec![2; 16])),
            ("parallelism", n(1.0)),
            ("tagLength", n(16.0)),
            ("memory", n(8.0)),
            ("passes", n(1.0)),
        ];
        if let Some(v) = version {
            raw.push(("version", n(v)));
        }
        raw
    };
    let v19 = derive("argon2i", raw(None), b"pw");
    assert_eq!(derive("argon2i", raw(Some(19.0)), b"pw"), v19);
    assert_ne!(derive("argon2i", raw(Some(16.0)), b"pw"), v19);
    assert!(params("argon2i", raw(Some(17.0))).is_err());
}
