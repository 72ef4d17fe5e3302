use super::*;
use serde::Deserialize;

#[test]
fn keeps_order_and_positions() {
    let doc = parse("b: 1\na:\n  - x\n  - 2_000\n", "f.yaml").unwrap();
    let map = doc.as_map().unwrap();
    assert_eq!(map[0].0.as_str(), Some("b"));
    assert_eq!(map[1].0.as_str(), Some("a"));
    let seq = map[1].1.as_seq().unwrap();
    assert_eq!(seq[1].value, Value::Int(2000));
    assert_eq!(seq[1].pos, Pos { line: 4, col: 5 });
}

#[test]
fn empty_file_is_null() {
    assert_eq!(parse("", "f").unwrap().value, Value::Null);
    assert_eq!(parse("# only a comment\n", "f").unwrap().value, Value::Null);
}

#[test]
fn duplicate_keys_are_errors_with_both_lines() {
    let err = parse("a: 1\nb: 2\na: 3\n", "x.yaml").unwrap_err();
    assert_eq!(err.to_string(), "x.yaml:3:1: duplicate key 'a' (first defined at line 1); remove one of them");
}

#[test]
fn lenient_parse_keeps_last_value_at_first_position() {
    let (doc, warnings) = parse_lenient("a: 1\nb: 2\na: 3\n", "r.yaml").unwrap();
    assert_eq!(doc.to_json(), serde_json::json!({"a": 3, "b": 2}));
    assert_eq!(doc.as_map().unwrap()[0].0.as_str(), Some("a"));
    assert_eq!(warnings.len(), 1);
    assert_eq!(
        warnings[0].to_string(),
        "r.yaml:3:1: duplicate key 'a' (first defined at line 1); the last value is used"
    );
}

#[test]
fn syntax_errors_name_file_and_line() {
    let err = parse("a: 1\nb: [1, 2\nc: 3\n", "broken.yaml").unwrap_err();
    assert_eq!(err.file.as_deref(), Some("broken.yaml"));
    assert!(err.pos.is_some());
    assert!(err.message.starts_with("invalid YAML"), "{err}");
}

#[test]
fn anchors_aliases_and_merge_keys() {
    let text = "base: &b\n  x: 1\n  y: 2\nother:\n  <<: *b\n  y: 3\n  z: 4\nlist: [*b]\n";
    let doc = parse(text, "m.yaml").unwrap();
    let other = doc.get("other").unwrap().to_json();
    assert_eq!(other, serde_json::json!({"x": 1, "y": 3, "z": 4}));
    let keys: Vec<&str> = doc.get("other").unwrap().as_map().unwrap().iter().filter_map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["x", "y", "z"], "an overriding key keeps the merged key's place, as in PyYAML");
    let merged_later = parse("b: &b {x: 1, y: 2}\no:\n  z: 0\n  y: 3\n  <<: *b\n", "m.yaml").unwrap();
    let keys: Vec<&str> =
        merged_later.get("o").unwrap().as_map().unwrap().iter().filter_map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["x", "y", "z"]);
    assert_eq!(doc.get("list").unwrap().to_json(), serde_json::json!([{"x": 1, "y": 2}]));
}

#[test]
fn alias_bomb_is_refused() {
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let prev = i - 1;
        text.push_str(&format!(
            "a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"
        ));
    }
    let err = parse(&text, "bomb.yaml").unwrap_err();
    assert!(err.message.contains("alias bomb"), "{err}");
}

#[test]
fn deep_nesting_is_refused() {
    let text = "[".repeat(MAX_DEPTH + 10) + &"]".repeat(MAX_DEPTH + 10);
    let err = parse(&text, "deep.yaml").unwrap_err();
    assert!(err.message.contains("nesting deeper"), "{err}");
}

#[test]
fn oversized_files_are_refused() {
    let big = vec![b' '; MAX_FILE_BYTES + 1];
    let err = text_of(&big).unwrap_err();
    assert!(err.message.contains("at most"), "{err}");
}

#[test]
fn two_documents_are_refused() {
    let err = parse("a: 1\n---\nb: 2\n", "two.yaml").unwrap_err();
    assert!(err.message.contains("more than one YAML document"), "{err}");
}

#[test]
fn unsupported_tags_are_refused() {
    let err = parse("a: !!python/object:os.system x\n", "t.yaml").unwrap_err();
    assert!(err.message.contains("unsupported YAML tag"), "{err}");
    assert_eq!(parse("a: !!str 8\n", "t").unwrap().get("a").unwrap().value, Value::Str("8".into()));
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Inner {
    tp: u32,
    dp_attn: Option<bool>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Outer {
    name: String,
    items: Vec<Inner>,
}

#[test]
fn typed_deserialization() {
    let doc = parse("name: x\nitems:\n  - tp: 8\n    dp-attn: true\n  - tp: 4\n", "t.yaml").unwrap();
    let outer: Outer = from_node(&doc).unwrap();
    assert_eq!(outer.items, vec![Inner { tp: 8, dp_attn: Some(true) }, Inner { tp: 4, dp_attn: None }]);
}

#[test]
fn typed_errors_name_line_and_field_path() {
    let doc = parse("name: x\nitems:\n  - tp: 8\n  - tp: \"8\"\n", "t.yaml").unwrap();
    let err = from_node::<Outer>(&doc).unwrap_err().in_file("t.yaml");
    assert_eq!(err.to_string(), "t.yaml:4:9: items[1].tp: expected an integer, found the string \"8\"");

    let doc = parse("name: x\nitems:\n  - tp: 8\n    ep: 8\n", "t.yaml").unwrap();
    let err = from_node::<Outer>(&doc).unwrap_err();
    assert_eq!(err.pos, Some(Pos { line: 4, col: 5 }));
    assert_eq!(err.field.as_deref(), Some("items[0]"));
    assert!(err.message.contains("unknown field `ep`"), "{err}");

    let doc = parse("name: x\n", "t.yaml").unwrap();
    let err = from_node::<Outer>(&doc).unwrap_err();
    assert!(err.message.contains("missing field `items`"), "{err}");
    assert_eq!(err.pos, Some(Pos { line: 1, col: 1 }));
}

#[test]
fn numeric_keys_read_as_string_keys() {
    let doc = parse("8192: a\n1k1k: b\n", "k").unwrap();
    let map: indexmap::IndexMap<String, String> = from_node(&doc).unwrap();
    assert_eq!(map.keys().collect::<Vec<_>>(), ["8192", "1k1k"]);
}

#[test]
fn no_panic_on_garbage() {
    for text in [
        "{",
        "]",
        ":",
        "- - - -",
        "a: *nope",
        "&a [*a]",
        "? [a]\n: b",
        "\t a: 1",
        "a: 'unterminated",
        "%YAML 9.9\n---\na",
    ] {
        let _ = parse(text, "g");
    }
}

#[test]
fn many_keys_and_merge_keys_parse_whole() {
    // Found while fuzzing (docs/fuzzing.md): each key was compared with every earlier key, so
    // 5,000 keys merged through 98 aliases (49 KB) took 40 s (docs/fuzzing.md records the
    // timing). No wall-clock bound here: it would only make the suite flaky under load.
    let keys: Vec<String> = (0..5000).map(|i| format!("k{i}: {i}")).collect();
    let merged = format!("a: &a {{{}}}\nb: {{k7: x, <<: [{}]}}\n", keys.join(", "), vec!["*a"; 98].join(", "));
    let flat = (0..100_000).map(|i| format!("k{i}: 0\n")).collect::<String>();
    let doc = parse(&merged, "m.yaml").unwrap();
    let b = doc.get("b").unwrap().as_map().unwrap();
    assert_eq!(b.len(), 5000);
    assert_eq!((b[7].0.as_str(), b[7].1.as_str()), (Some("k7"), Some("x")), "explicit value in the merged key's place");
    assert_eq!(parse(&flat, "f.yaml").unwrap().as_map().map(<[_]>::len), Some(100_000));
}

#[test]
fn key_index_finds_and_forgets_keys_on_both_sides_of_the_scan_limit() {
    let node = |value: Value| Node { value, pos: Pos::default() };
    let entry = |i: i64| (node(Value::Int(i)), node(Value::Str(format!("v{i}"))));
    let mut entries = Vec::new();
    let mut index = KeyIndex::default();
    for i in 0..3 {
        index.push(&mut entries, entry(i));
    }
    // Scanning: `1` and `1.0` are different keys, a forgotten key is not found.
    assert_eq!(index.position(&entries, &node(Value::Int(1))), Some(1));
    assert_eq!(index.position(&entries, &node(Value::Float(1.0))), None);
    index.forget(&node(Value::Int(1)), 1);
    assert_eq!(index.position(&entries, &node(Value::Int(1))), None);
    // A key re-added after it was forgotten is found at its new place, before and after the
    // index switches to hashing, and the forgotten one stays forgotten.
    index.push(&mut entries, entry(1));
    assert_eq!(index.position(&entries, &node(Value::Int(1))), Some(3));
    for i in 10..10 + KeyIndex::SCAN_MAX as i64 {
        index.push(&mut entries, entry(i));
    }
    assert!(entries.len() > KeyIndex::SCAN_MAX);
    assert_eq!(index.position(&entries, &node(Value::Int(1))), Some(3));
    assert_eq!(index.position(&entries, &node(Value::Int(2))), Some(2));
    assert_eq!(index.position(&entries, &node(Value::Int(25))), Some(19));
    index.forget(&node(Value::Int(25)), 19);
    assert_eq!(index.position(&entries, &node(Value::Int(25))), None);
    assert_eq!(KeyIndex::of(&entries).position(&entries, &node(Value::Int(25))), Some(19));
}

#[test]
fn an_unclosed_flow_collection_names_where_it_was_opened() {
    let err = parse("a: 1\nb: [1, 2\nc: 3\n", "broken.yaml").unwrap_err();
    assert_eq!(
        err.to_string(),
        "broken.yaml:3:2: invalid YAML: illegal placement of ':' indicator \
         (inside the `[` opened at line 2, column 4, which is not closed before line 3)"
    );
    // The innermost open flow collection is named, under block collections and other flows.
    let err = parse("top:\n  a: [1, {x: 2, y: [3\n", "nested.yaml").unwrap_err();
    assert!(
        err.message.ends_with("(inside the `[` opened at line 2, column 20, which is not closed before line 3)"),
        "{err}"
    );
    let err = parse("m: {x: 1\nb: 2\n", "map.yaml").unwrap_err();
    assert!(err.message.contains("inside the `{` opened at line 1, column 4"), "{err}");
    // An error outside any flow collection names only where the parser stopped.
    let err = parse("a: 1\n  b: 2\n", "indent.yaml").unwrap_err();
    assert!(!err.message.contains("opened at"), "{err}");
}

#[test]
fn a_budget_bounds_the_bytes_and_nodes_of_every_document_read_under_it() {
    let doc = "- a\n- b\n- c\n"; // 4 nodes, 12 bytes
    {
        let scope = Budget { bytes: 1000, nodes: 10 }.enter();
        assert!(parse(doc, "one.yaml").is_ok());
        assert!(parse(doc, "two.yaml").is_ok());
        assert_eq!(scope.spent(), Budget { bytes: 24, nodes: 8 });
        let err = parse(doc, "three.yaml").unwrap_err();
        assert_eq!(
            err.to_string(),
            "three.yaml:2:3: not read: the YAML read by this verification is past its budget of 10 nodes \
             (2 were left for this document)"
        );
        assert_eq!(scope.spent().nodes, 10, "a failed parse spends what it used");
        assert!(parse("", "empty.yaml").is_ok(), "an empty document needs no node");
    }
    {
        let _scope = Budget { bytes: 20, nodes: 1000 }.enter();
        assert!(parse(doc, "one.yaml").is_ok());
        let err = parse(doc, "two.yaml").unwrap_err();
        assert!(err.message.starts_with("not read: this 12-byte document would bring"), "{err}");
    }
    // Outside a scope only the per-document bounds apply.
    for _ in 0..3 {
        assert!(parse(doc, "free.yaml").is_ok());
    }
}

#[test]
fn nested_budget_scopes_restore_the_outer_account() {
    let outer = Budget { bytes: 1000, nodes: 100 }.enter();
    parse("[1, 2]", "a.yaml").unwrap();
    {
        let inner = Budget { bytes: 1000, nodes: 1 }.enter();
        assert!(parse("[1, 2]", "b.yaml").is_err());
        assert_eq!(inner.spent().nodes, 1);
    }
    assert_eq!(outer.spent(), Budget { bytes: 6, nodes: 3 });
}

/// Issue 35 case 3: a 1 MiB scalar anchor aliased 3,000 times is 3,001 nodes (under the node
/// bound) but 3 GB of text; it is refused by the expanded-bytes bound before it allocates.
#[test]
fn a_large_scalar_aliased_many_times_is_refused_by_its_expanded_bytes() {
    let big = "x".repeat(1024 * 1024);
    let aliases: String = (0..3000).map(|i| format!("k{i}: *big\n")).collect();
    let text = format!("big: &big {big}\n{aliases}");
    assert!(text.len() < MAX_FILE_BYTES);
    let started = std::time::Instant::now();
    let err = parse(&text, "master.yaml").unwrap_err();
    assert!(err.message.contains(&format!("more than {MAX_EXPANDED_BYTES} bytes of text")), "{err}");
    assert_eq!((err.file.as_deref(), err.pos.map(|p| p.line)), (Some("master.yaml"), Some(16)), "the 15th alias");
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "took {:?}", started.elapsed());
    // Aliases that stay within twice the file bound are read.
    let few: String = (0..8).map(|i| format!("k{i}: *big\n")).collect();
    let doc = parse(&format!("big: &big {big}\n{few}"), "master.yaml").unwrap();
    assert_eq!(doc.text_bytes(), 9 * big.len() + "big".len() + 8 * "kN".len());
}
