//! srtctl's `--set KEY=VALUE` and `--unset KEY` recipe overrides (srt-slurm #390, merged in the 2.0 stack #407;
//! `src/srtctl/core/overrides.py`), applied to the positioned recipe as srtctl applies them to
//! the raw document: before variant resolution, so an explicit `--set` always wins (decision TD9).
//!
//! - The key is a dotted path; `[N]` indexes a list (never first); a quoted segment (`"…"` or
//!   `'…'`) may hold dots (`container_mounts."/a/b.c"`).
//! - The value is read as a YAML scalar or sequence (PyYAML `safe_load`: `720` an int, `"720"` a
//!   string, `[4, 8]` a list); a value that reads as a mapping, or does not parse, is the literal
//!   text, since engine flags take JSON (`speculative-config={"method": "eagle"}`); an empty value
//!   is the empty string.
//! - Missing mappings on the way are created; a list index out of range, indexing a non-list or
//!   descending into a non-mapping is an error.
//! - On an override file (`base`) the value is written into `base` and into every `override_*`
//!   variant, and as a one-element list (broadcast to every zipped variant) into every
//!   `zip_override_*` group, so no variant can shadow it.
//! - `--unset KEY` removes the key (or list item) from the document and every variant; a path
//!   that is not there is a no-op.
//!
//! The arguments come from a pull request (a launcher or a config row), so everything is bounded:
//! the number of overrides, the path depth, a segment's length and the argument's length. A bad
//! override is an [`OverrideError`] naming where it is written, never a panic.

use crate::yaml::{self, Node, Pos, Value};

/// Most `--set` arguments one job may pass.
pub const MAX_OVERRIDES: usize = 64;
/// Most segments of one path (real recipes nest < 10 levels).
pub const MAX_SEGMENTS: usize = 16;
/// Longest `KEY=VALUE` argument, in bytes.
pub const MAX_ARG_BYTES: usize = 4096;
/// Longest list index, in digits.
const MAX_INDEX_DIGITS: usize = 6;

/// One segment of an override path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    Key(String),
    Index(usize),
}

/// One `--set KEY=VALUE` or `--unset KEY`, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    pub path: Vec<Segment>,
    pub value: Node,
    /// `--unset`: the key is removed (`value` is null).
    pub unset: bool,
    /// The argument as written (`KEY=VALUE`).
    pub arg: String,
    /// `file:line` where it is written.
    pub at: String,
}

/// A `--set` sweepgate cannot read or apply, naming where it is written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{at}: {flag} {arg}: {message}")]
pub struct OverrideError {
    /// `--set` or `--unset`.
    pub flag: &'static str,
    pub at: String,
    /// The argument, cut to [`MAX_ARG_BYTES`].
    pub arg: String,
    pub message: String,
}

impl OverrideError {
    fn new(at: &str, arg: &str, message: impl Into<String>) -> OverrideError {
        let mut cut = MAX_ARG_BYTES.min(arg.len());
        while !arg.is_char_boundary(cut) {
            cut -= 1;
        }
        OverrideError { flag: "--set", at: at.to_owned(), arg: arg[..cut].to_owned(), message: message.into() }
    }

    fn of(o: &Override, message: impl Into<String>) -> OverrideError {
        let e = OverrideError::new(&o.at, &o.arg, message);
        OverrideError { flag: if o.unset { "--unset" } else { "--set" }, ..e }
    }
}

/// The path as srtctl prints it (`a.b[2]."c.d"`).
pub fn format_path(path: &[Segment]) -> String {
    let mut out = String::new();
    for segment in path {
        match segment {
            Segment::Index(i) => out.push_str(&format!("[{i}]")),
            Segment::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                if k.contains(['.', '[', ']']) {
                    out.push_str(&format!("\"{k}\""));
                } else {
                    out.push_str(k);
                }
            }
        }
    }
    out
}

/// Parses `a.b[2]."c.d".e` into its segments (srtctl's `parse_path`).
pub fn parse_path(text: &str) -> Result<Vec<Segment>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("override path must not be empty".into());
    }
    let mut segments = Vec::new();
    let mut expect_segment = true;
    let mut rest = text;
    while let Some(ch) = rest.chars().next() {
        if segments.len() > MAX_SEGMENTS {
            return Err(format!("the path has more than {MAX_SEGMENTS} segments"));
        }
        match ch {
            '.' => {
                if expect_segment {
                    return Err(format!("empty segment in override path '{text}'"));
                }
                expect_segment = true;
                rest = &rest[1..];
            }
            '[' => {
                if expect_segment && segments.is_empty() {
                    return Err(format!("override path '{text}' must start with a key, not an index"));
                }
                let end = rest.find(']').ok_or_else(|| format!("bad list index in override path '{text}'"))?;
                let digits = &rest[1..end];
                if digits.is_empty() || digits.len() > MAX_INDEX_DIGITS || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(format!("bad list index in override path '{text}'"));
                }
                segments.push(Segment::Index(digits.parse().map_err(|_| format!("bad list index in '{text}'"))?));
                rest = &rest[end + 1..];
                expect_segment = false;
            }
            _ if !expect_segment => {
                let at = text.len() - rest.len();
                return Err(format!("expected '.' or '[' at position {at} in override path '{text}'"));
            }
            '"' | '\'' => {
                let end = rest[1..].find(ch).ok_or_else(|| format!("unterminated quote in override path '{text}'"))?;
                segments.push(Segment::Key(rest[1..=end].to_owned()));
                rest = &rest[end + 2..];
                expect_segment = false;
            }
            _ => {
                let end = rest.find(['.', '[']).unwrap_or(rest.len());
                segments.push(Segment::Key(rest[..end].to_owned()));
                rest = &rest[end..];
                expect_segment = false;
            }
        }
    }
    if expect_segment {
        return Err(format!("override path '{text}' ends with a separator"));
    }
    if segments.len() > MAX_SEGMENTS {
        return Err(format!("the path has more than {MAX_SEGMENTS} segments"));
    }
    Ok(segments)
}

/// srtctl's `parse_value`: a YAML scalar or sequence; a mapping or unparsable text is literal.
fn parse_value(raw: &str, pos: Pos) -> Node {
    let literal = || Node { value: Value::Str(raw.to_owned()), pos };
    if raw.is_empty() {
        return literal();
    }
    match yaml::parse(raw, "--set") {
        Ok(Node { value: Value::Map(_), .. }) | Err(_) => literal(),
        Ok(node) => relocate(node, pos),
    }
}

/// The value written where the override lands: every node points at the replaced value.
fn relocate(mut node: Node, pos: Pos) -> Node {
    node.pos = pos;
    match &mut node.value {
        Value::Seq(items) => {
            for item in items.iter_mut() {
                *item = relocate(std::mem::replace(item, Node { value: Value::Null, pos }), pos);
            }
        }
        Value::Map(entries) => {
            for (k, v) in entries.iter_mut() {
                k.pos = pos;
                *v = relocate(std::mem::replace(v, Node { value: Value::Null, pos }), pos);
            }
        }
        _ => {}
    }
    node
}

/// Parses one `KEY=VALUE` argument written at `at` (`file:line`).
pub fn parse_set(arg: &str, at: &str) -> Result<Override, OverrideError> {
    if arg.len() > MAX_ARG_BYTES {
        return Err(OverrideError::new(at, arg, format!("longer than {MAX_ARG_BYTES} bytes")));
    }
    let (key, raw) = arg.split_once('=').ok_or_else(|| OverrideError::new(at, arg, "--set expects KEY=VALUE"))?;
    let path = parse_path(key).map_err(|m| OverrideError::new(at, arg, m))?;
    Ok(Override { path, value: parse_value(raw, Pos::default()), unset: false, arg: arg.to_owned(), at: at.to_owned() })
}

/// Parses one `--unset KEY` argument written at `at`.
pub fn parse_unset(arg: &str, at: &str) -> Result<Override, OverrideError> {
    let error = |m: String| OverrideError { flag: "--unset", ..OverrideError::new(at, arg, m) };
    if arg.len() > MAX_ARG_BYTES {
        return Err(error(format!("longer than {MAX_ARG_BYTES} bytes")));
    }
    let path = parse_path(arg).map_err(error)?;
    Ok(Override {
        path,
        value: Node { value: Value::Null, pos: Pos::default() },
        unset: true,
        arg: arg.to_owned(),
        at: at.to_owned(),
    })
}

/// Parses the `--set` (`unset: false`) and `--unset` arguments of one job, each with where it
/// is written, in order (the last one of a key wins, as srtctl applies them in order).
pub fn parse_sets<'a>(
    args: impl IntoIterator<Item = (bool, &'a str, &'a str)>,
) -> Result<Vec<Override>, OverrideError> {
    let mut out = Vec::new();
    for (unset, arg, at) in args {
        if out.len() == MAX_OVERRIDES {
            return Err(OverrideError::new(at, arg, format!("more than {MAX_OVERRIDES} --set/--unset arguments")));
        }
        out.push(if unset { parse_unset(arg, at)? } else { parse_set(arg, at)? });
    }
    Ok(out)
}

/// Applies `overrides` to a recipe document (plain or override file), as srtctl's
/// `apply_overrides_to_recipe` does.
pub fn apply(root: &mut Node, overrides: &[Override]) -> Result<(), OverrideError> {
    for o in overrides {
        let Value::Map(entries) = &mut root.value else {
            return Err(OverrideError::of(o, "the recipe is not a mapping"));
        };
        if !entries.iter().any(|(k, _)| k.as_str() == Some("base")) {
            apply_one(root, o, &o.value)?;
            continue;
        }
        for (key, section) in entries.iter_mut() {
            let Some(key) = key.as_str() else { continue };
            if !matches!(section.value, Value::Map(_)) {
                continue;
            }
            let zip = key.starts_with("zip_override_");
            if key == "base" || key.starts_with("override_") || zip && o.unset {
                apply_one(section, o, &o.value)?;
            } else if zip {
                // A one-element list broadcasts to every zipped variant, whatever the value.
                let one = Node { value: Value::Seq(vec![o.value.clone()]), pos: o.value.pos };
                apply_one(section, o, &one)?;
            }
        }
    }
    Ok(())
}

fn apply_one(doc: &mut Node, o: &Override, value: &Node) -> Result<(), OverrideError> {
    let error =
        |depth: usize, message: &str| OverrideError::of(o, format!("{}: {message}", format_path(&o.path[..depth])));
    let Some((last, parents)) = o.path.split_last() else {
        return Err(OverrideError::of(o, "override path must not be empty"));
    };
    let mut node = doc;
    for (depth, segment) in parents.iter().enumerate() {
        let pos = node.pos;
        node = match (segment, &mut node.value) {
            (Segment::Index(i), Value::Seq(items)) => {
                let len = items.len();
                // srtctl refuses an index out of range on the way, for `--unset` too.
                items
                    .get_mut(*i)
                    .ok_or_else(|| error(depth + 1, &format!("index [{i}] is out of range (length {len})")))?
            }
            (Segment::Index(i), _) => return Err(error(depth + 1, &format!("cannot index a non-list with [{i}]"))),
            (Segment::Key(k), Value::Map(entries)) => {
                let at = match entries.iter().position(|(key, _)| key.key_text().as_deref() == Some(k.as_str())) {
                    Some(at) => at,
                    // `--unset` of a path that is not there changes nothing.
                    None if o.unset => return Ok(()),
                    None => {
                        let key = Node { value: Value::Str(k.clone()), pos };
                        entries.push((key, Node { value: Value::Map(Vec::new()), pos }));
                        entries.len() - 1
                    }
                };
                &mut entries[at].1
            }
            (Segment::Key(k), _) => {
                return Err(error(depth + 1, &format!("cannot descend into a non-mapping at '{k}'")))
            }
        };
    }
    let pos = node.pos;
    match (last, &mut node.value) {
        (Segment::Index(i), Value::Seq(items)) if o.unset => {
            if *i < items.len() {
                items.remove(*i);
            }
        }
        (Segment::Key(k), Value::Map(entries)) if o.unset => {
            entries.retain(|(key, _)| key.key_text().as_deref() != Some(k.as_str()));
        }
        _ if o.unset => {}
        (Segment::Index(i), Value::Seq(items)) if *i < items.len() => {
            let at = items[*i].pos;
            items[*i] = relocate(value.clone(), at);
        }
        (Segment::Index(_), _) => return Err(error(o.path.len(), "index out of range")),
        (Segment::Key(k), Value::Map(entries)) => {
            match entries.iter_mut().find(|(key, _)| key.key_text().as_deref() == Some(k.as_str())) {
                Some((_, v)) => *v = relocate(value.clone(), v.pos),
                None => entries.push((Node { value: Value::Str(k.clone()), pos }, relocate(value.clone(), pos))),
            }
        }
        (Segment::Key(_), _) => return Err(error(o.path.len(), "cannot set a key on a non-mapping")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::srt_recipe::{Recipe, RecipeFacts};

    fn set(arg: &str) -> Override {
        parse_set(arg, "runners/launch_x.sh:12").unwrap_or_else(|e| panic!("{e}"))
    }

    fn applied(text: &str, args: &[&str]) -> Result<Node, OverrideError> {
        let mut root = yaml::parse(text, "r.yaml").unwrap();
        let overrides: Vec<Override> = args.iter().map(|a| set(a)).collect();
        apply(&mut root, &overrides).map(|()| root)
    }

    fn json(node: &Node) -> String {
        node.to_json().to_string()
    }

    /// The paths and values of srt-slurm #390's own examples.
    #[test]
    fn paths_and_values_read_as_srtctl_reads_them() {
        use Segment::{Index, Key};
        let k = |s: &str| Key(s.to_owned());
        assert_eq!(parse_path("health_check.max_attempts").unwrap(), [k("health_check"), k("max_attempts")]);
        assert_eq!(parse_path("a.b[2].\"c.d\".e").unwrap(), [k("a"), k("b"), Index(2), k("c.d"), k("e")]);
        assert_eq!(parse_path("container_mounts.'/a/b.c'").unwrap(), [k("container_mounts"), k("/a/b.c")]);
        assert_eq!(format_path(&parse_path("a.b[2].\"c.d\"").unwrap()), "a.b[2].\"c.d\"");
        for (bad, why) in [
            ("", "must not be empty"),
            ("a..b", "empty segment"),
            ("[0].a", "must start with a key"),
            ("a[x]", "bad list index"),
            ("a[1234567]", "bad list index"),
            ("a.\"b", "unterminated quote"),
            ("a.", "ends with a separator"),
            ("a[0]b", "expected '.' or '['"),
        ] {
            let err = parse_path(bad).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
        assert_eq!(set("health_check.max_attempts=720").value.value, Value::Int(720));
        assert_eq!(set("a=\"720\"").value.value, Value::Str("720".into()));
        assert_eq!(set("a=true").value.value, Value::Bool(true));
        assert_eq!(set("a=").value.value, Value::Str(String::new()));
        assert_eq!(json(&set("benchmark.concurrencies=[4,8]").value), "[4,8]");
        let flag = set("backend.sglang_config.decode.speculative-config={\"method\": \"eagle\"}");
        assert_eq!(flag.value.value, Value::Str("{\"method\": \"eagle\"}".into()), "a mapping stays the literal JSON");
        assert_eq!(set("a=x: [").value.value, Value::Str("x: [".into()), "unparsable text is literal");
    }

    #[test]
    fn values_land_where_srtctl_writes_them() {
        let plain = "schema: 2\nbenchmark:\n  concurrencies: [1]\n  env: {CONC: '1'}\nroles:\n  agg:\n    args: {tensor-parallel-size: 4}\n";
        let root = applied(
            plain,
            &[
                "benchmark.concurrencies=[2, 4]",
                "roles.agg.args.tensor-parallel-size=8",
                "frontend.placement.node=head",
            ],
        )
        .unwrap();
        assert_eq!(json(root.get("benchmark").unwrap()), r#"{"concurrencies":[2,4],"env":{"CONC":"1"}}"#);
        assert_eq!(root.get("frontend").map(json).as_deref(), Some(r#"{"placement":{"node":"head"}}"#), "created");
        let replaced = root.get("roles").and_then(|r| r.get("agg")).and_then(|a| a.get("args")).unwrap();
        assert_eq!(json(replaced), r#"{"tensor-parallel-size":8}"#);
        assert_eq!(
            replaced.get("tensor-parallel-size").unwrap().pos.line,
            7,
            "the value points at the line it replaces"
        );
        let last_wins = applied(plain, &["benchmark.env.CONC=2", "benchmark.env.CONC=3"]).unwrap();
        assert_eq!(last_wins.get("benchmark").and_then(|b| b.get("env")).map(json).as_deref(), Some(r#"{"CONC":3}"#));
        let indexed = applied(plain, &["benchmark.concurrencies[0]=16"]).unwrap();
        assert_eq!(indexed.get("benchmark").and_then(|b| b.get("concurrencies")).map(json).as_deref(), Some("[16]"));
    }

    #[test]
    fn bad_overrides_are_named_errors_with_where_they_are_written() {
        let plain = "schema: 2\nbenchmark:\n  concurrencies: [1]\nname: x\n";
        let err = applied(plain, &["benchmark.concurrencies[3]=16"]).unwrap_err().to_string();
        assert_eq!(err, "runners/launch_x.sh:12: --set benchmark.concurrencies[3]=16: benchmark.concurrencies[3]: index out of range");
        let err = applied(plain, &["name.first=y"]).unwrap_err().to_string();
        assert!(err.ends_with("name.first: cannot set a key on a non-mapping"), "{err}");
        let err = applied(plain, &["name.a.b=y"]).unwrap_err().to_string();
        assert!(err.ends_with("name.a: cannot descend into a non-mapping at 'a'"), "{err}");
        let err = applied(plain, &["name[0].a=y"]).unwrap_err().to_string();
        assert!(err.ends_with("name[0]: cannot index a non-list with [0]"), "{err}");
        let err = parse_set("no-equals", "c.yaml:3").unwrap_err().to_string();
        assert_eq!(err, "c.yaml:3: --set no-equals: --set expects KEY=VALUE");
        // Bounded: the argument, the path depth and the number of arguments.
        let long = format!("a={}", "x".repeat(MAX_ARG_BYTES));
        assert!(parse_set(&long, "c.yaml:3").unwrap_err().message.contains("longer than 4096 bytes"));
        let deep = format!("{}=1", vec!["a"; MAX_SEGMENTS + 1].join("."));
        assert!(parse_set(&deep, "c.yaml:3").unwrap_err().message.contains("more than 16 segments"));
        let many = vec![(false, "a=1", "c.yaml:3"); MAX_OVERRIDES + 1];
        assert!(parse_sets(many).unwrap_err().message.contains("more than 64 --set/--unset arguments"));
        assert_eq!(parse_sets(vec![(true, "a", "c.yaml:3"); MAX_OVERRIDES]).map(|o| o.len()), Ok(MAX_OVERRIDES));
    }

    /// On an override file the value reaches `base` and every variant, a zip group as a
    /// one-element list, so the variants' own values cannot shadow it; the resolved facts (and
    /// so the engine settings) carry it. The shape of the Oct 2026 native single-node recipes.
    #[test]
    fn override_files_get_the_value_in_every_variant() {
        let text = "base:\n  schema: 2\n  name: n\n  resources: {gpu_type: mi355x, gpus_per_node: 8}\n  engine: sglang\n  roles:\n    agg: {nodes: 1, workers: 1, gpus: 4, args: {tensor-parallel-size: 4, mem-fraction-static: 0.8}}\nzip_override_tp4:\n  roles:\n    agg:\n      args:\n        mem-fraction-static: [0.8, 0.7]\n  benchmark:\n    env:\n      CONC: ['4', '8']\noverride_tp4_c16:\n  roles:\n    agg: {args: {mem-fraction-static: 0.6}}\n  benchmark: {env: {CONC: '16'}}\n";
        let mut recipe = Recipe::parse(text, "r.yaml").unwrap();
        apply(&mut recipe.root, &[set("roles.agg.args.mem-fraction-static=0.9")]).unwrap();
        let variants = recipe.resolve(None).unwrap().variants;
        assert_eq!(variants.len(), 3);
        for v in &variants {
            let args = v.config.get("roles").and_then(|r| r.get("agg")).and_then(|a| a.get("args")).unwrap();
            assert_eq!(args.get("mem-fraction-static").map(|n| &n.value), Some(&Value::Float(0.9)), "{}", v.selector);
        }
        // The variants' facts read the overridden values: TP 8 on every variant.
        apply(&mut recipe.root, &[set("roles.agg.args.tensor-parallel-size=8"), set("roles.agg.gpus=8")]).unwrap();
        for v in recipe.resolve(None).unwrap().variants {
            let facts = RecipeFacts::read(&v.config, "r.yaml").unwrap();
            assert_eq!(facts.tp_ep(), (8, 1), "{}", v.selector);
        }
    }

    /// `--unset` removes a key or a list item everywhere it is written; a missing path is a no-op.
    #[test]
    fn unset_removes_the_key_from_the_document_and_every_variant() {
        let unset = |arg: &str| parse_unset(arg, "runners/launch_x.sh:9").unwrap_or_else(|e| panic!("{e}"));
        let text = "base:\n  name: n\n  sbatch_directives: {exclude: node7, mem: '0'}\n  benchmark: {concurrencies: [1, 2]}\noverride_a:\n  sbatch_directives: {exclude: node9}\nzip_override_z:\n  sbatch_directives:\n    exclude: [node1, node2]\n";
        let mut root = yaml::parse(text, "r.yaml").unwrap();
        let overrides = [
            unset("sbatch_directives.exclude"),
            unset("benchmark.concurrencies[0]"),
            unset("health_check.max_attempts"),
        ];
        apply(&mut root, &overrides).unwrap();
        assert_eq!(
            json(&root),
            r#"{"base":{"name":"n","sbatch_directives":{"mem":"0"},"benchmark":{"concurrencies":[2]}},"override_a":{"sbatch_directives":{}},"zip_override_z":{"sbatch_directives":{}}}"#
        );
        let err = parse_unset("a..b", "runners/launch_x.sh:9").unwrap_err().to_string();
        assert_eq!(err, "runners/launch_x.sh:9: --unset a..b: empty segment in override path 'a..b'");
    }
}
