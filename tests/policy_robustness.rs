//! No policy parser panics, whatever the input: random text over the characters that matter to
//! Markdown, YAML and CODEOWNERS, and random mutations of the fixture files.

use std::path::Path;

use sweepgate::domain::checklist_template::ChecklistTemplate;
use sweepgate::domain::codeowners::Codeowners;
use sweepgate::domain::eval_thresholds::EvalThresholds;
use sweepgate::domain::golden_al::GoldenAlFile;
use sweepgate::domain::models_md::ModelsMd;
use sweepgate::domain::waiver::Waiver;
use sweepgate::intake::signoff::{match_template, Signoff, SignoffUrl};

/// xorshift64: deterministic, so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const ALPHABET: &[&str] = &[
    "-",
    "[",
    "]",
    "x",
    "X",
    " ",
    "  ",
    "\n",
    "\r\n",
    "\t",
    "#",
    "##",
    "###",
    "|",
    "`",
    "```",
    "~~~",
    "*",
    "_",
    "(",
    ")",
    ":",
    "@",
    "/",
    "**",
    "!",
    "\\",
    "?",
    "0",
    "7",
    "2026-08-03",
    "年",
    "月",
    "日",
    "é",
    "—",
    "https://",
    "a",
    "Signed:",
    "Additional detail section:",
    "As a PR reviewer and CODEOWNER",
    "- [x] ",
    "| a | b |",
    "|---|---|",
    "thinking_on:",
    "default:",
    "models:",
    "{",
    "}",
    "&a",
    "*a",
    "'",
    "\"",
    "\u{0}",
    "\u{feff}",
];

fn run_all(text: &str, template: &ChecklistTemplate) {
    let _ = Codeowners::parse(text, "CODEOWNERS").0.owners_of("a/b/c.md");
    let _ = ChecklistTemplate::parse(text, "c.md");
    let _ = ModelsMd::parse(text, "MODELS.md");
    let _ = Waiver::parse(text, "docs/waiver/1.md");
    let _ = GoldenAlFile::parse(text, "g.yaml");
    let _ = EvalThresholds::parse(text, "t.yaml");
    let _ = SignoffUrl::parse(text);
    if let Ok(s) = Signoff::parse(text) {
        let _ = match_template(&s, template);
    }
}

fn fixture(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(rel)).unwrap()
}

#[test]
fn random_text_never_panics() {
    let template = ChecklistTemplate::parse(&fixture("repo/docs/PR_REVIEW_CHECKLIST.md"), "c.md").0.unwrap();
    let mut rng = Rng(0x5eed_cafe_f00d_d00d);
    for _ in 0..1500 {
        let len = rng.below(80);
        let text: String = (0..len).map(|_| ALPHABET[rng.below(ALPHABET.len())]).collect();
        run_all(&text, &template);
    }
}

#[test]
fn mutated_fixtures_never_panic() {
    let template = ChecklistTemplate::parse(&fixture("repo/docs/PR_REVIEW_CHECKLIST.md"), "c.md").0.unwrap();
    let sources = [
        "repo/.github/CODEOWNERS",
        "repo/MODELS.md",
        "repo/docs/PR_REVIEW_CHECKLIST.md",
        "repo/docs/waiver/4100.md",
        "repo/golden_al_distribution/dsr1_mtp.yaml",
        "repo/utils/evals/thresholds.yaml",
        "signoff/complete.md",
        "signoff/broken-markdown.md",
    ];
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    for source in sources {
        let original: Vec<char> = fixture(source).chars().collect();
        for _ in 0..60 {
            let mut chars = original.clone();
            for _ in 0..1 + rng.below(8) {
                let at = rng.below(chars.len());
                match rng.below(3) {
                    0 => {
                        chars.remove(at.min(chars.len().saturating_sub(1)));
                    }
                    1 => chars.insert(at, ALPHABET[rng.below(ALPHABET.len())].chars().next().unwrap_or('x')),
                    _ => chars.truncate(at),
                }
                if chars.is_empty() {
                    break;
                }
            }
            run_all(&chars.into_iter().collect::<String>(), &template);
        }
    }
}
