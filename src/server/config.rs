//! The `sweepgate serve` config file (`--config FILE`, TOML): the settings of the serve flags,
//! each key named like its flag in snake_case. Flags and `SWEEPGATE_*` variables win over the
//! file (the command line layers them). Unknown keys and mistyped values are errors naming
//! `file:line:col`. Relative paths are relative to the file's folder. Credentials can stay out
//! of the file: `webhook_secrets_file`, `github_token_file` and `private_key_file` name files.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::yaml::Pos;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServeFile {
    pub listen: Option<SocketAddr>,
    #[serde(default, deserialize_with = "secret_list")]
    pub webhook_secrets: Option<Vec<String>>,
    /// One webhook secret per line (blank lines ignored); read into `webhook_secrets`.
    webhook_secrets_file: Option<PathBuf>,
    pub app_id: Option<u64>,
    pub private_key_file: Option<PathBuf>,
    /// A file holding the token; read into `github_token` (a token is never written inline).
    github_token_file: Option<PathBuf>,
    #[serde(skip)]
    pub github_token: Option<String>,
    pub github_api_url: Option<String>,
    pub github_timeout_secs: Option<u64>,
    pub bot_login: Option<String>,
    pub status_context: Option<String>,
    pub outbox: Option<PathBuf>,
    pub state: Option<PathBuf>,
    pub workers: Option<usize>,
    pub queue_capacity: Option<usize>,
    pub max_connections: Option<usize>,
    pub header_timeout_secs: Option<u64>,
    pub body_timeout_secs: Option<u64>,
    pub idle_timeout_secs: Option<u64>,
    pub drain_secs: Option<u64>,
    pub verify_deadline_secs: Option<u64>,
    pub reconcile_secs: Option<u64>,
    pub reconcile_max_prs: Option<usize>,
    pub cancel_slurm_jobs: Option<bool>,
    pub dispatch_ledger: Option<PathBuf>,
    pub signoff_status_context: Option<String>,
    pub advisory: Option<bool>,
    /// Preflight for authors (`--preflight`, on by default; `preflight = false` turns it off).
    pub preflight: Option<bool>,
    pub reviewers: Option<Vec<String>>,
    /// Protected target branches that hold their own policy (`--policy-branch`).
    pub policy_branches: Option<Vec<String>>,
    pub upstream_github_api: Option<String>,
    /// A file holding the token for upstream GitHub reads (the token is never written inline).
    pub upstream_token_file: Option<PathBuf>,
    pub huggingface_url: Option<String>,
    /// Registry base URL overrides, `name = "url"`.
    pub registries: Option<BTreeMap<String, String>>,
    /// Pool profiles the server runs sweeps on (`--pool`).
    pub pools: Option<Vec<PathBuf>>,
    pub sweep_repo: Option<PathBuf>,
    pub sweep_state: Option<PathBuf>,
    pub sweep_check_name: Option<String>,
    pub sweep_check_every_secs: Option<u64>,
    pub sweep_poll_ms: Option<u64>,
    /// In-PR sweep sources the verifier counts (`--sweep-source`).
    pub sweep_source: Option<Vec<String>>,
    /// Where the details page is reachable; statuses link to it (`--public-url`).
    pub public_url: Option<String>,
    pub details_db: Option<PathBuf>,
    pub details_private: Option<bool>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{file}{}: {message}", .pos.map(|p| format!(":{p}")).unwrap_or_default())]
    Invalid { file: String, pos: Option<Pos>, message: String },
    #[error("reading {file}: {source}")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
}

impl ServeFile {
    /// Parses the text of the file `file` (used in errors); paths stay as written.
    pub fn parse(text: &str, file: &str) -> Result<ServeFile, ConfigError> {
        let parsed: ServeFile = toml::from_str(text).map_err(|e| ConfigError::Invalid {
            file: file.to_string(),
            pos: e.span().map(|span| Pos::at_offset(text, span.start)),
            message: e.message().to_string(),
        })?;
        if parsed.webhook_secrets.is_some() && parsed.webhook_secrets_file.is_some() {
            return Err(ConfigError::Invalid {
                file: file.to_string(),
                pos: None,
                message: "set webhook_secrets or webhook_secrets_file, not both".into(),
            });
        }
        Ok(parsed)
    }

    /// Reads the file at `path`, resolves its relative paths against its folder, and reads the
    /// secrets its `*_file` keys name.
    pub fn load(path: &Path) -> Result<ServeFile, ConfigError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read { file: shown.clone(), source })?;
        let mut file = ServeFile::parse(&text, &shown)?;
        let folder = path.parent().unwrap_or(Path::new(""));
        for slot in [
            &mut file.webhook_secrets_file,
            &mut file.private_key_file,
            &mut file.github_token_file,
            &mut file.upstream_token_file,
            &mut file.outbox,
            &mut file.state,
            &mut file.sweep_repo,
            &mut file.sweep_state,
            &mut file.details_db,
        ] {
            if let Some(relative) = slot.as_mut().filter(|p| p.is_relative()) {
                *relative = folder.join(&*relative);
            }
        }
        for pool in file.pools.iter_mut().flatten().filter(|p| p.is_relative()) {
            *pool = folder.join(&*pool);
        }
        if let Some(secrets) = &file.webhook_secrets_file {
            file.webhook_secrets = Some(secret_lines(&read_secret(secrets)?));
        }
        if let Some(token) = &file.github_token_file {
            file.github_token = Some(read_secret(token)?.trim().to_string());
        }
        Ok(file)
    }
}

/// `webhook_secrets`: a list of strings. A value of another shape is refused without showing
/// it (serde's own message would quote the secret).
fn secret_list<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Vec<String>>, D::Error> {
    struct Secrets;
    const EXPECTED: &str = "a list of strings, e.g. webhook_secrets = [\"...\"] (the value is not shown)";
    impl<'de> serde::de::Visitor<'de> for Secrets {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str(EXPECTED)
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
            let mut out = Vec::new();
            while let Some(item) = seq.next_element::<toml::Value>()? {
                match item {
                    toml::Value::String(secret) => out.push(secret),
                    _ => return Err(serde::de::Error::custom(format!("webhook_secrets must be {EXPECTED}"))),
                }
            }
            Ok(out)
        }
    }
    // Every other shape: one message naming the key and the expected shape, no value.
    struct Hidden(Vec<String>);
    impl<'de> serde::Deserialize<'de> for Hidden {
        fn deserialize<D2: serde::Deserializer<'de>>(d: D2) -> Result<Hidden, D2::Error> {
            d.deserialize_any(Secrets)
                .map(Hidden)
                .map_err(|_| serde::de::Error::custom(format!("webhook_secrets must be {EXPECTED}")))
        }
    }
    Hidden::deserialize(deserializer).map(|h| Some(h.0))
}

fn read_secret(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|source| ConfigError::Read { file: path.display().to_string(), source })
}

fn secret_lines(text: &str) -> Vec<String> {
    text.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_string).collect()
}

/// `text` with the credentials of every URL in it (`scheme://user:password@host`) replaced by
/// `<redacted>`, for whatever is printed or logged (`doctor`, `serve --print-config`, errors).
pub fn redact_credentials(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        out.push_str(before);
        // The authority ends at the path, query, fragment, or the end of the URL in the text.
        let end = after
            .find(|c: char| matches!(c, '/' | '?' | '#' | '"' | '\'' | '<' | '>' | '`') || c.is_whitespace())
            .unwrap_or(after.len());
        match after[..end].rfind('@') {
            Some(user_end) => {
                out.push_str("<redacted>");
                rest = &after[user_end..];
            }
            None => rest = after,
        }
    }
    out.push_str(rest);
    out
}

/// Refuses a `public_url` that carries credentials: statuses link to it on every PR, where
/// anyone can read it. The error names the setting and its source, never the secret.
pub fn refuse_credentials(setting: &str, url: &str, source: &str) -> Result<(), String> {
    let carries = reqwest::Url::parse(url).is_ok_and(|u| !u.username().is_empty() || u.password().is_some());
    match carries || redact_credentials(url) != url {
        true => Err(format!(
            "{setting} ({source}) carries credentials ({}): every status links to it on the PR, where anyone can \
             read it. Remove the user:password@ part; the details page needs no login",
            redact_credentials(url)
        )),
        false => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_in_urls_are_redacted_wherever_they_are() {
        assert_eq!(redact_credentials("http://user:pass@host:8080/x"), "http://<redacted>@host:8080/x");
        assert_eq!(
            redact_credentials("a = \"https://tok@h\"  # flag, b = https://h/p@q, c=http://u:p@q@h?x"),
            "a = \"https://<redacted>@h\"  # flag, b = https://h/p@q, c=http://<redacted>@h?x"
        );
        assert_eq!(redact_credentials("no url, a@b, ://@"), "no url, a@b, ://<redacted>@");
        assert_eq!(redact_credentials("https://github.com/o/r"), "https://github.com/o/r");
        let err = refuse_credentials("public_url", "https://admin:S3cret@gate.example.com", "config").unwrap_err();
        assert!(
            err.starts_with("public_url (config) carries credentials (https://<redacted>@gate.example.com)"),
            "{err}"
        );
        assert!(!err.contains("S3cret") && !err.contains("admin"), "{err}");
        assert!(refuse_credentials("public_url", "https://gate.example.com/", "flag").is_ok());
    }

    #[test]
    fn unknown_keys_and_bad_values_name_the_line() {
        let err = ServeFile::parse("workers = 2\n\nlisen = \"127.0.0.1:1\"\n", "s.toml").unwrap_err().to_string();
        assert!(err.starts_with("s.toml:3:1: unknown field `lisen`, expected one of"), "{err}");
        let err = ServeFile::parse("listen = \"not an address\"\n", "s.toml").unwrap_err().to_string();
        assert!(err.starts_with("s.toml:1:10: invalid socket address"), "{err}");
        let err = ServeFile::parse("workers = \"4\"", "s.toml").unwrap_err().to_string();
        assert!(err.starts_with("s.toml:1:11: invalid type"), "{err}");
        let both = "webhook_secrets = [\"a\"]\nwebhook_secrets_file = \"s\"\n";
        for mistyped in
            ["webhook_secrets = \"Str0ng,x\"", "webhook_secrets = [\"ok\", 42]", "webhook_secrets = { Str0ng = 1 }"]
        {
            let err = ServeFile::parse(mistyped, "s.toml").unwrap_err().to_string();
            assert!(err.contains("webhook_secrets must be a list of strings"), "{err}");
            assert!(!err.contains("Str0ng") && !err.contains("42"), "the value is not echoed: {err}");
        }
        let listed = ServeFile::parse("webhook_secrets = [\"Str0ng,x\"]", "s.toml").unwrap();
        assert_eq!(listed.webhook_secrets.unwrap(), ["Str0ng,x"], "a comma inside a listed secret is kept");
        assert!(ServeFile::parse(both, "s.toml").unwrap_err().to_string().contains("not both"));
    }

    #[test]
    fn the_example_file_parses() {
        let example = ServeFile::parse(include_str!("../../sweepgate.example.toml"), "sweepgate.example.toml").unwrap();
        assert_eq!((example.app_id, example.workers), (Some(123456), Some(4)));
    }

    #[test]
    fn secrets_files_are_read_relative_to_the_config() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("secrets"), "new-secret\n\n  old-secret \n").unwrap();
        std::fs::write(dir.path().join("token"), "ghs_abc\n").unwrap();
        let config = dir.path().join("serve.toml");
        std::fs::write(
            &config,
            "webhook_secrets_file = \"secrets\"\ngithub_token_file = \"token\"\nstate = \"/abs/state.sqlite\"\n\
             outbox = \"out/outbox.sqlite\"\n[registries]\n\"docker.io\" = \"https://mirror\"\n",
        )
        .unwrap();
        let file = ServeFile::load(&config).unwrap();
        assert_eq!(file.webhook_secrets.unwrap(), ["new-secret", "old-secret"]);
        assert_eq!(file.github_token.as_deref(), Some("ghs_abc"));
        assert_eq!(file.state.unwrap(), Path::new("/abs/state.sqlite"));
        assert_eq!(file.outbox.unwrap(), dir.path().join("out/outbox.sqlite"));
        assert_eq!(file.registries.unwrap()["docker.io"], "https://mirror");
        std::fs::remove_file(dir.path().join("token")).unwrap();
        assert!(ServeFile::load(&config).unwrap_err().to_string().contains("token"));
    }
}
