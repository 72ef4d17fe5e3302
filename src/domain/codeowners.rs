//! `.github/CODEOWNERS` with GitHub's semantics (spec 30 §7.1).
//!
//! Patterns follow gitignore as GitHub applies it: a leading `/` or a `/` in the middle anchors
//! the pattern at the root, a slash-less pattern matches at any depth, a trailing `/` means "this
//! directory and everything below", `*` stays inside one path segment, `**` crosses segments and
//! `dir/*` matches direct children only. A pattern that names a directory owns everything below.
//! GitHub does not support `!` negation, `[ ]` ranges or `\` escapes: such lines are skipped (as
//! GitHub skips them) and reported. The **last** matching rule wins; owners never accumulate.

use crate::diag::Diagnostic;
use crate::yaml::Pos;

/// GitHub ignores a CODEOWNERS file larger than this.
pub const MAX_CODEOWNERS_BYTES: usize = 3 * 1024 * 1024;

/// One owner on a rule line.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Owner {
    /// `@login` (stored without the `@`).
    User { login: String },
    /// `@org/team-slug`.
    Team { org: String, slug: String },
    /// `someone@example.com`.
    Email { address: String },
}

impl Owner {
    fn parse(token: &str) -> Option<Owner> {
        if let Some(handle) = token.strip_prefix('@') {
            return match handle.split_once('/') {
                Some((org, slug)) if is_login(org) && is_team_slug(slug) => {
                    Some(Owner::Team { org: org.to_owned(), slug: slug.to_owned() })
                }
                Some(_) => None,
                None if is_login(handle) => Some(Owner::User { login: handle.to_owned() }),
                None => None,
            };
        }
        let (local, domain) = token.split_once('@')?;
        let valid = !local.is_empty()
            && domain.contains('.')
            && !domain.starts_with('.')
            && !domain.ends_with('.')
            && domain.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
        valid.then(|| Owner::Email { address: token.to_owned() })
    }

    /// Whether this owner is the GitHub account `login` itself (logins compare case-insensitively).
    pub fn is_user(&self, login: &str) -> bool {
        matches!(self, Owner::User { login: l } if l.eq_ignore_ascii_case(login.trim_start_matches('@')))
    }

    /// Whether this owner is the team `org/slug` (case-insensitive, as GitHub resolves them).
    pub fn is_team(&self, org: &str, slug: &str) -> bool {
        matches!(self, Owner::Team { org: o, slug: s } if o.eq_ignore_ascii_case(org) && s.eq_ignore_ascii_case(slug))
    }
}

impl std::fmt::Display for Owner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Owner::User { login } => write!(f, "@{login}"),
            Owner::Team { org, slug } => write!(f, "@{org}/{slug}"),
            Owner::Email { address } => f.write_str(address),
        }
    }
}

/// GitHub logins: alphanumerics and single inner hyphens, at most 39 characters.
fn is_login(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 39
        && !s.starts_with('-')
        && !s.ends_with('-')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

fn is_team_slug(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// One path segment of a compiled pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    /// `**`: zero or more whole segments.
    AnyDepth,
    /// A glob over one segment (`*` and `?` stay inside the segment).
    Glob(String),
}

/// A compiled CODEOWNERS pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pattern {
    segments: Vec<Segment>,
    /// Trailing `/`: matches only a directory, i.e. only paths strictly below it.
    dir_only: bool,
    /// `dir/*`: direct children only, not files further below.
    children_only: bool,
}

impl Pattern {
    fn compile(raw: &str) -> Result<Pattern, String> {
        if raw.starts_with('!') {
            return Err("`!` negation is not supported in CODEOWNERS; list the owners explicitly".into());
        }
        if raw.contains('[') || raw.contains(']') {
            return Err("`[ ]` character ranges are not supported in CODEOWNERS; spell each path out".into());
        }
        if raw.contains('\\') {
            return Err("`\\` escapes are not supported in CODEOWNERS (GitHub skips such a line)".into());
        }
        let dir_only = raw.ends_with('/');
        let body = raw.trim_end_matches('/');
        let anchored = body.starts_with('/') || body.trim_start_matches('/').contains('/');
        let body = body.trim_start_matches('/');
        if body.is_empty() {
            return Err("the pattern names no path".into());
        }
        if body.split('/').any(str::is_empty) {
            return Err("the pattern contains an empty path segment (`//`)".into());
        }
        let mut segments = Vec::new();
        if !anchored {
            segments.push(Segment::AnyDepth);
        }
        for part in body.split('/') {
            if part == "**" {
                if segments.last() != Some(&Segment::AnyDepth) {
                    segments.push(Segment::AnyDepth);
                }
            } else {
                segments.push(Segment::Glob(part.to_owned()));
            }
        }
        let children_only = !dir_only && body.contains('/') && body.ends_with("/*") && !body.ends_with("**/*");
        Ok(Pattern { segments, dir_only, children_only })
    }

    fn matches(&self, parts: &[&str]) -> bool {
        if parts.is_empty() {
            return false;
        }
        if self.children_only {
            return match_segments(&self.segments, parts, Rest::None);
        }
        // gitignore: a pattern also matches when it names a parent directory of the path.
        match_segments(&self.segments, parts, if self.dir_only { Rest::Some } else { Rest::Any })
    }
}

/// What may remain of the path once the pattern is used up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rest {
    /// Nothing: the pattern names the path itself.
    None,
    /// At least one segment: the pattern names a directory above the path.
    Some,
    /// Either.
    Any,
}

/// Whether `pattern` matches `path`, with `rest` deciding what may follow the pattern. Dynamic
/// programming over (pattern segment, path position), last segment first: trying every skip of
/// every `**` recursively is exponential, and a 1.7 KB CODEOWNERS file found by fuzzing ran for
/// more than 10 s.
fn match_segments(pattern: &[Segment], path: &[&str], rest: Rest) -> bool {
    let n = path.len();
    // matched[s]: the pattern segments after the current one match path[s..].
    let mut matched: Vec<bool> = (0..=n)
        .map(|s| match rest {
            Rest::None => s == n,
            Rest::Some => s < n,
            Rest::Any => true,
        })
        .collect();
    for (index, segment) in pattern.iter().enumerate().rev() {
        matched = match segment {
            // `a/**` matches everything strictly inside `a`, whatever `rest` says.
            Segment::AnyDepth if index + 1 == pattern.len() => (0..=n).map(|s| s < n).collect(),
            // Zero or more whole segments, leaving at least one for the segments after it.
            Segment::AnyDepth => {
                let mut row = vec![false; n + 1];
                let mut later = false;
                for s in (0..n).rev() {
                    later |= matched[s];
                    row[s] = later;
                }
                row
            }
            Segment::Glob(glob) => {
                (0..=n).map(|s| s < n && matched[s + 1] && glob_match(glob.as_bytes(), path[s].as_bytes())).collect()
            }
        };
    }
    matched[0]
}

/// `*` (any run, `**` inside a segment behaves like `*`) and `?` (one character) within one segment.
fn glob_match(glob: &[u8], name: &[u8]) -> bool {
    let (mut g, mut n) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match glob.get(g) {
            Some(b'*') => {
                star = Some((g, n));
                g += 1;
            }
            Some(b'?') => {
                g += 1;
                n += 1;
                // Keep `?` on character boundaries of UTF-8 names.
                while n < name.len() && name.get(n).is_some_and(|b| b & 0xC0 == 0x80) {
                    n += 1;
                }
            }
            Some(c) if name.get(n) == Some(c) => {
                g += 1;
                n += 1;
            }
            _ => match star {
                Some((sg, sn)) => {
                    g = sg + 1;
                    n = sn + 1;
                    star = Some((sg, sn + 1));
                }
                None => return false,
            },
        }
    }
    glob.get(g..).is_some_and(|rest| rest.iter().all(|&c| c == b'*'))
}

/// One valid rule line.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Rule {
    /// 1-based line in the file.
    pub line: u32,
    pub pattern: String,
    /// Empty: the rule makes matching paths unowned.
    pub owners: Vec<Owner>,
    #[serde(skip)]
    compiled: Pattern,
}

impl Rule {
    /// The bare catch-all (`*`, or its spellings `**`, `/**`, `**/*`): a default owner, not a
    /// per-path gatekeeper (spec 30 Check 0 rule 3).
    pub fn is_catch_all(&self) -> bool {
        matches!(self.pattern.as_str(), "*" | "**" | "/**" | "**/*" | "/**/*")
    }

    /// A rule with no owners: matching paths have no code owner.
    pub fn is_unowned(&self) -> bool {
        self.owners.is_empty()
    }

    pub fn matches(&self, path: &str) -> bool {
        self.compiled.matches(&path_parts(path))
    }

    /// Whether `login` is listed on this line directly (teams are not expanded here).
    pub fn lists_user(&self, login: &str) -> bool {
        self.owners.iter().any(|o| o.is_user(login))
    }

    /// The team owners of this line as `(org, slug)`.
    pub fn teams(&self) -> impl Iterator<Item = (&str, &str)> {
        self.owners.iter().filter_map(|o| match o {
            Owner::Team { org, slug } => Some((org.as_str(), slug.as_str())),
            _ => None,
        })
    }
}

/// A parsed CODEOWNERS file: valid rules in file order, and the lines GitHub would skip.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Codeowners {
    pub file: String,
    pub rules: Vec<Rule>,
    /// Lines skipped because of invalid syntax. Ownership decisions that could exempt a change
    /// must fail closed when this is non-empty (spec 30 §1.4 rule 5).
    pub invalid_lines: Vec<u32>,
}

impl Codeowners {
    /// Parses the file; every skipped line yields an error diagnostic with its position.
    pub fn parse(text: &str, file: &str) -> (Codeowners, Vec<Diagnostic>) {
        let mut out = Codeowners { file: file.to_owned(), ..Codeowners::default() };
        let mut diags = Vec::new();
        if text.len() > MAX_CODEOWNERS_BYTES {
            diags.push(Diagnostic::new(
                file,
                None,
                format!(
                    "CODEOWNERS is {} bytes; GitHub ignores CODEOWNERS files of {MAX_CODEOWNERS_BYTES} bytes or more",
                    text.len()
                ),
            ));
            out.invalid_lines.push(0);
            return (out, diags);
        }
        for (index, raw_line) in text.lines().enumerate() {
            let line = u32::try_from(index + 1).unwrap_or(u32::MAX);
            let content = strip_comment(raw_line);
            let mut tokens = token_spans(content);
            let Some((pattern_col, pattern)) = tokens.next() else { continue };
            let mut error = |col: usize, message: String| {
                let col = u32::try_from(col + 1).unwrap_or(u32::MAX);
                diags.push(Diagnostic::new(file, Some(Pos { line, col }), message));
            };
            let compiled = match Pattern::compile(pattern) {
                Ok(p) => p,
                Err(why) => {
                    error(pattern_col, format!("pattern `{pattern}`: {why}; GitHub skips this line"));
                    out.invalid_lines.push(line);
                    continue;
                }
            };
            let mut owners = Vec::new();
            let mut bad_owner = false;
            for (col, token) in tokens {
                match Owner::parse(token) {
                    Some(owner) => owners.push(owner),
                    None => {
                        error(
                            col,
                            format!(
                                "`{token}` is not an owner; write @user, @org/team or an email address \
                                 (GitHub skips this line)"
                            ),
                        );
                        bad_owner = true;
                    }
                }
            }
            if bad_owner {
                out.invalid_lines.push(line);
                continue;
            }
            out.rules.push(Rule { line, pattern: pattern.to_owned(), owners, compiled });
        }
        (out, diags)
    }

    /// The rule that decides who owns `path`: the **last** matching line, with its line number.
    /// `None` when no rule matches (the path has no code owner).
    pub fn owners_of(&self, path: &str) -> Option<(&Rule, u32)> {
        let parts = path_parts(path);
        self.rules.iter().rev().find(|r| r.compiled.matches(&parts)).map(|r| (r, r.line))
    }

    /// Whether `login` is listed as an individual owner on any line (Check 0's "recognized
    /// CODEOWNER" and its fallback when team membership cannot be read).
    pub fn lists_user_anywhere(&self, login: &str) -> bool {
        self.rules.iter().any(|r| r.lists_user(login))
    }

    /// Whether every line was valid (an exemption may only be granted from a valid file).
    pub fn is_valid(&self) -> bool {
        self.invalid_lines.is_empty()
    }
}

fn path_parts(path: &str) -> Vec<&str> {
    path.split('/').filter(|p| !p.is_empty()).collect()
}

/// Drops a `#` comment: a whole-line comment, or a `#` that starts a token after the owners.
fn strip_comment(line: &str) -> &str {
    let mut prev_space = true;
    for (i, c) in line.char_indices() {
        if c == '#' && prev_space {
            return line.get(..i).unwrap_or_default();
        }
        prev_space = c.is_whitespace();
    }
    line
}

/// Whitespace-separated tokens with their 0-based byte column.
fn token_spans(line: &str) -> impl Iterator<Item = (usize, &str)> {
    line.split_whitespace().map(move |t| (t.as_ptr() as usize - line.as_ptr() as usize, t))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Codeowners {
        let (c, d) = Codeowners::parse(text, ".github/CODEOWNERS");
        assert!(d.is_empty(), "unexpected diagnostics: {d:?}");
        c
    }

    fn owner_line(c: &Codeowners, path: &str) -> Option<u32> {
        c.owners_of(path).map(|(_, line)| line)
    }

    #[test]
    fn pattern_table() {
        // (pattern, path, matches)
        let table: &[(&str, &str, bool)] = &[
            ("*", "README.md", true),
            ("*", "a/b/c.txt", true),
            ("*.js", "app.js", true),
            ("*.js", "src/deep/app.js", true),
            ("*.js", "app.jsx", false),
            ("*.go", "src/go/file.txt", false),
            ("docs/*", "docs/getting-started.md", true),
            ("docs/*", "docs/build-app/troubleshooting.md", false),
            ("docs/*", "sub/docs/x.md", false),
            ("/docs/", "docs/a/b.md", true),
            ("/docs/", "docs", false),
            ("/docs/", "sub/docs/a.md", false),
            ("apps/", "apps/a.txt", true),
            ("apps/", "x/y/apps/a.txt", true),
            ("apps/", "apps", false),
            ("apps/", "myapps/a.txt", false),
            ("**/logs", "logs/x.log", true),
            ("**/logs", "build/logs/x.log", true),
            ("**/logs", "a/b/logs", true),
            ("/build/logs/", "build/logs/x/y.log", true),
            ("/build/logs/", "other/build/logs/y.log", false),
            ("configs/amd-master.yaml", "configs/amd-master.yaml", true),
            ("configs/amd-master.yaml", "x/configs/amd-master.yaml", false),
            ("configs/amd-master.yaml", "configs/amd-master.yaml.bak", false),
            ("MODELS.md", "MODELS.md", true),
            ("MODELS.md", "inferencex-e2e/docs/MODELS.md", true),
            ("MODELS.md", "models.md", false),
            ("/MODELS.md", "docs/MODELS.md", false),
            ("experimental/operatorx/", "experimental/operatorx/k/a.py", true),
            ("experimental/operatorx/", "experimental/operatorx", false),
            ("srt-slurm-recipes/**/mi355x-*/", "srt-slurm-recipes/sglang/dsv4/mi355x-disagg/r.yaml", true),
            ("srt-slurm-recipes/**/mi355x-*/", "srt-slurm-recipes/mi355x-a/r.yaml", true),
            ("srt-slurm-recipes/**/mi355x-*/", "srt-slurm-recipes/sglang/b300-fp4/r.yaml", false),
            ("docs/**", "docs/a/b/c.md", true),
            ("docs/**", "docs", false),
            ("a/**/b", "a/b", true),
            ("a/**/b", "a/x/y/b", true),
            ("a/**/b", "a/x/y/c", false),
            ("/scripts", "scripts/run.sh", true),
            ("scripts", "tools/scripts/run.sh", true),
            ("file?.txt", "file1.txt", true),
            ("file?.txt", "file12.txt", false),
            ("Docs/", "docs/a.md", false),
        ];
        for &(pattern, path, expected) in table {
            let c = parse(&format!("{pattern} @o"));
            assert_eq!(c.owners_of(path).is_some(), expected, "pattern `{pattern}` vs `{path}`");
        }
    }

    #[test]
    fn last_match_wins_and_owners_do_not_accumulate() {
        let c = parse(
            "* @InferenceX/core\n\
             configs/amd-master.yaml @amd-a @amd-b\n\
             configs/nvidia-master.yaml @nv-a @InferenceX/core\n\
             configs/ @configs-team-lead\n\
             configs/nvidia-master.yaml @nv-b\n",
        );
        let (rule, line) = c.owners_of("configs/nvidia-master.yaml").unwrap();
        assert_eq!(line, 5);
        assert_eq!(rule.owners, vec![Owner::User { login: "nv-b".into() }]);
        assert!(!rule.lists_user("nv-a"), "owners of earlier lines do not carry over");
        // The later directory rule overrides the specific AMD line.
        assert_eq!(owner_line(&c, "configs/amd-master.yaml"), Some(4));
        let (rule, _) = c.owners_of("perf-changelog.yaml").unwrap();
        assert!(rule.is_catch_all());
        assert_eq!(rule.teams().collect::<Vec<_>>(), vec![("InferenceX", "core")]);
    }

    #[test]
    fn rule_without_owners_makes_a_path_unowned() {
        let c = parse("* @core\n/generated/\n");
        let (rule, line) = c.owners_of("generated/x.json").unwrap();
        assert_eq!(line, 2);
        assert!(rule.is_unowned());
        assert!(!c.owners_of("src/a.rs").unwrap().0.is_unowned());
    }

    #[test]
    fn no_rule_means_no_owner() {
        let c = parse("docs/ @writer\n");
        assert!(c.owners_of("src/lib.rs").is_none());
        assert!(c.owners_of("").is_none());
    }

    #[test]
    fn owners_kinds_comments_and_case() {
        let c = parse(
            "# heading comment\n\n\
             MODELS.md @Alice @org/team-x dev@example.com # trailing comment\n",
        );
        let (rule, _) = c.owners_of("MODELS.md").unwrap();
        assert_eq!(
            rule.owners,
            vec![
                Owner::User { login: "Alice".into() },
                Owner::Team { org: "org".into(), slug: "team-x".into() },
                Owner::Email { address: "dev@example.com".into() },
            ]
        );
        assert!(rule.lists_user("alice"), "logins compare case-insensitively");
        assert!(rule.lists_user("@ALICE"));
        assert!(rule.owners.get(1).unwrap().is_team("ORG", "Team-X"));
        assert!(c.lists_user_anywhere("alice"));
        assert!(!c.lists_user_anywhere("bob"));
        assert_eq!(
            rule.owners.iter().map(ToString::to_string).collect::<Vec<_>>(),
            ["@Alice", "@org/team-x", "dev@example.com"]
        );
    }

    #[test]
    fn unsupported_syntax_is_reported_with_its_line_and_skipped() {
        let text = "* @core\n!docs/ @x\nsrc/[ab].rs @y\n\\#notes @z\nok/ @bad!owner\nfine/ @good\n";
        let (c, diags) = Codeowners::parse(text, "CODEOWNERS");
        let lines: Vec<u32> = diags.iter().map(|d| d.pos.unwrap().line).collect();
        assert_eq!(lines, [2, 3, 4, 5]);
        assert_eq!(c.invalid_lines, [2, 3, 4, 5]);
        assert!(!c.is_valid());
        assert!(diags[0].message.contains("negation"), "{}", diags[0]);
        assert!(diags[1].message.contains("ranges"));
        assert!(diags[2].message.contains("escapes"));
        assert!(diags[3].message.contains("`@bad!owner`"));
        assert_eq!(diags[3].pos.unwrap().col, 5);
        // Skipped lines own nothing: the catch-all still decides docs/.
        assert_eq!(owner_line(&c, "docs/a.md"), Some(1));
        assert_eq!(owner_line(&c, "fine/x"), Some(6));
    }

    #[test]
    fn malformed_owners() {
        for bad in ["@", "@-x", "@org/", "@/team", "a@b", "@a/b/c", "plain", "x@.com"] {
            assert!(Owner::parse(bad).is_none(), "{bad} should be rejected");
        }
    }

    #[test]
    fn oversized_file_is_ignored_like_github() {
        let text = "* @core\n".repeat(MAX_CODEOWNERS_BYTES / 8 + 1);
        let (c, diags) = Codeowners::parse(&text, "CODEOWNERS");
        assert!(c.rules.is_empty());
        assert!(!c.is_valid());
        assert_eq!(diags.len(), 1);
    }

    #[test]
    fn many_double_stars_match_in_polynomial_time() {
        // Found by fuzzing (docs/fuzzing.md): every `**` tried every skip recursively, so 14
        // `**/*` pairs against a 60-segment path ran for more than 20 s.
        let pattern = format!("/{}/x", ["**/*"; 14].join("/"));
        let c = parse(&format!("{pattern} @octo\n"));
        let started = std::time::Instant::now();
        assert_eq!(owner_line(&c, &["a"; 60].join("/")), None);
        assert_eq!(owner_line(&c, &format!("{}/x", ["a"; 59].join("/"))), Some(1));
        assert_eq!(owner_line(&c, &format!("{}/x/y", ["a"; 14].join("/"))), Some(1), "x names a directory");
        assert_eq!(owner_line(&c, &format!("{}/x", ["a"; 13].join("/"))), None, "each `*` takes one segment");
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
        let artifact = include_str!("../../fixtures/fuzz-regressions/codeowners-double-stars.txt");
        let (c, _) = Codeowners::parse(artifact, ".github/CODEOWNERS");
        for line in artifact.lines() {
            let _ = c.owners_of(line);
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
    }

    #[test]
    fn garbage_never_panics() {
        for text in ["\u{0}\u{ffff}", "/ @x", "// @x", "** @x", "a//b @x", "é?*/ @x", "*\t@a\t@b"] {
            let (c, _) = Codeowners::parse(text, "f");
            for path in ["", "/", "a", "é/ü", "a//b"] {
                let _ = c.owners_of(path);
            }
        }
        assert!(glob_match("é?".as_bytes(), "éü".as_bytes()));
    }
}
