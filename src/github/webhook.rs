//! Webhook signatures: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>`, verified
//! in constant time against every configured secret (rotation keeps old and new at once).

use hmac::{Hmac, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("missing X-Hub-Signature-256 header")]
    Missing,
    #[error("X-Hub-Signature-256 is not `sha256=` followed by 64 hex digits")]
    Malformed,
    #[error("signature does not match any configured webhook secret")]
    Mismatch,
    #[error("no webhook secret is configured; refusing unsigned deliveries")]
    NoSecret,
}

/// Verifies `header` (the raw header value) for `body` against any of `secrets`.
pub fn verify<S: AsRef<[u8]>>(secrets: &[S], header: Option<&str>, body: &[u8]) -> Result<(), SignatureError> {
    let mut verifier = Verifier::new(secrets, header)?;
    verifier.update(body);
    verifier.finish()
}

/// A signature check fed the body as it arrives, so the server never holds more than the
/// size bound of a body it has not authenticated. The header is checked first: a delivery
/// without a well-formed signature is refused before its body is read.
pub struct Verifier {
    macs: Vec<HmacSha256>,
    expected: [u8; 32],
}

impl Verifier {
    pub fn new<S: AsRef<[u8]>>(secrets: &[S], header: Option<&str>) -> Result<Verifier, SignatureError> {
        if secrets.is_empty() {
            return Err(SignatureError::NoSecret);
        }
        let header = header.ok_or(SignatureError::Missing)?;
        let hex_sig = header.strip_prefix("sha256=").ok_or(SignatureError::Malformed)?;
        let mut expected = [0u8; 32];
        hex::decode_to_slice(hex_sig, &mut expected).map_err(|_| SignatureError::Malformed)?;
        let macs = secrets
            .iter()
            .map(|secret| HmacSha256::new_from_slice(secret.as_ref()).map_err(|_| SignatureError::NoSecret))
            .collect::<Result<_, _>>()?;
        Ok(Verifier { macs, expected })
    }

    pub fn update(&mut self, chunk: &[u8]) {
        for mac in &mut self.macs {
            mac.update(chunk);
        }
    }

    pub fn finish(self) -> Result<(), SignatureError> {
        // Check every secret (no early exit) so timing does not reveal which one matched.
        let mut matched = false;
        for mac in self.macs {
            matched |= mac.verify_slice(&self.expected).is_ok();
        }
        if matched {
            Ok(())
        } else {
            Err(SignatureError::Mismatch)
        }
    }
}

/// The header value for `body` signed with `secret` (used by `sweepgate replay` and tests).
pub fn sign(secret: &[u8], body: &[u8]) -> String {
    // HMAC accepts keys of any length, so this cannot fail.
    let mut mac = HmacSha256::new_from_slice(secret).unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GITHUB_VECTOR: &str = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";

    #[test]
    fn githubs_documented_test_vector() {
        assert_eq!(sign(b"It's a Secret to Everybody", b"Hello, World!"), GITHUB_VECTOR);
        assert_eq!(verify(&["It's a Secret to Everybody"], Some(GITHUB_VECTOR), b"Hello, World!"), Ok(()));
    }

    #[test]
    fn any_of_several_secrets_is_accepted() {
        let sig = sign(b"new", b"body");
        assert_eq!(verify(&["old", "new"], Some(&sig), b"body"), Ok(()));
        assert_eq!(verify(&["old"], Some(&sig), b"body"), Err(SignatureError::Mismatch));
    }

    #[test]
    fn forged_missing_and_malformed_signatures_fail() {
        let sig = sign(b"s", b"body");
        assert_eq!(verify(&["s"], Some(&sig), b"body!"), Err(SignatureError::Mismatch));
        assert_eq!(verify(&["s"], None, b"body"), Err(SignatureError::Missing));
        assert_eq!(verify(&["s"], Some("sha1=abc"), b"body"), Err(SignatureError::Malformed));
        assert_eq!(verify(&["s"], Some(&sig.to_uppercase()), b"body"), Err(SignatureError::Malformed));
        assert_eq!(
            verify(&["s"], Some(&format!("sha256={}", "zz".repeat(32))), b"body"),
            Err(SignatureError::Malformed)
        );
        assert_eq!(verify::<&str>(&[], Some(&sig), b"body"), Err(SignatureError::NoSecret));
    }

    #[test]
    fn a_body_fed_in_chunks_verifies_like_a_whole_one() {
        let body = b"{\"action\":\"opened\"}";
        let sig = sign(b"s", body);
        let mut verifier = Verifier::new(&["other", "s"], Some(&sig)).unwrap();
        for chunk in body.chunks(3) {
            verifier.update(chunk);
        }
        assert_eq!(verifier.finish(), Ok(()));
        let mut verifier = Verifier::new(&["s"], Some(&sig)).unwrap();
        verifier.update(&body[..5]);
        assert_eq!(verifier.finish(), Err(SignatureError::Mismatch), "a truncated body does not verify");
        assert!(matches!(Verifier::new(&["s"], Some("sha256=abc")), Err(SignatureError::Malformed)));
    }
}
