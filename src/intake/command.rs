//! Reuse commands (spec 10 §3.2-3.4, §13; decisions I2-I4): `/use <run_id>` and the legacy
//! `/reuse-sweep-run [run_id]`, found Markdown-aware (never inside code, quotes or HTML), alone
//! on their line, digits only or a sweepgate sweep id (decision L8); the newest authorized
//! command decides.

use std::ops::Range;

use chrono::{DateTime, Utc};
use pulldown_cmark::{Event, Options, Parser, Tag};

use crate::escape::code;

/// Which spelling was used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum CommandName {
    #[serde(rename = "/use")]
    Use,
    #[serde(rename = "/reuse-sweep-run")]
    ReuseSweepRun,
}

impl CommandName {
    pub fn as_str(self) -> &'static str {
        match self {
            CommandName::Use => "/use",
            CommandName::ReuseSweepRun => "/reuse-sweep-run",
        }
    }

    fn from_token(token: &str) -> Option<CommandName> {
        match token {
            "/use" => Some(CommandName::Use),
            "/reuse-sweep-run" => Some(CommandName::ReuseSweepRun),
            _ => None,
        }
    }
}

/// A sweep sweepgate ran itself: `pr<N>-<head 10 hex>-a<k>` (decision L2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SweepRef {
    pub pr: u64,
    head: [u8; 10],
    pub attempt: u32,
}

impl SweepRef {
    /// `None` unless `text` is exactly a sweep id (lowercase hex, PR and attempt ≥ 1).
    pub fn parse(text: &str) -> Option<SweepRef> {
        let mut parts = text.strip_prefix("pr")?.split('-');
        let (pr, head, attempt) = (parts.next()?, parts.next()?, parts.next()?);
        let digits = |s: &str| !s.is_empty() && s.len() <= 19 && s.bytes().all(|b| b.is_ascii_digit());
        let hex = head.len() == 10 && head.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        let attempt = attempt.strip_prefix('a').filter(|a| digits(a) && a.len() <= 9)?;
        if parts.next().is_some() || !digits(pr) || !hex {
            return None;
        }
        let sweep =
            SweepRef { pr: pr.parse().ok()?, head: head.as_bytes().try_into().ok()?, attempt: attempt.parse().ok()? };
        (sweep.pr > 0 && sweep.attempt > 0).then_some(sweep)
    }

    /// The first 10 hex digits of the head the sweep ran.
    pub fn head(&self) -> &str {
        std::str::from_utf8(&self.head).unwrap_or_default()
    }
}

impl std::fmt::Display for SweepRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pr{}-{}-a{}", self.pr, self.head(), self.attempt)
    }
}

/// A well-formed reuse command: a pinned run or sweepgate sweep, or (legacy spelling only)
/// unpinned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReuseCommand {
    pub name: CommandName,
    pub run_id: Option<u64>,
    /// Set instead of `run_id` when the command names a sweepgate sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepRef>,
}

impl std::fmt::Display for ReuseCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.run_id, self.sweep) {
            (Some(id), _) => write!(f, "{} {id}", self.name.as_str()),
            (None, Some(sweep)) => write!(f, "{} {sweep}", self.name.as_str()),
            (None, None) => f.write_str(self.name.as_str()),
        }
    }
}

/// A line that starts with a command word but breaks the grammar. `line` is 1-based.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    #[error("line {line}: /use needs a run id")]
    MissingRunId { line: usize },
    #[error("line {line}: run id {arg:?} must be decimal digits only")]
    NotDigits { line: usize, arg: String },
    #[error("line {line}: run id {arg:?} is too large")]
    RunIdTooLarge { line: usize, arg: String },
    #[error("line {line}: the command must be alone on its line (unexpected {extra:?})")]
    TrailingText { line: usize, extra: String },
}

impl CommandError {
    pub fn code(&self) -> &'static str {
        match self {
            CommandError::MissingRunId { .. } => "missing-run-id",
            CommandError::NotDigits { .. } => "run-id-not-digits",
            CommandError::RunIdTooLarge { .. } => "run-id-too-large",
            CommandError::TrailingText { .. } => "trailing-text",
        }
    }

    /// Markdown-safe English message (user text shown as escaped code).
    pub fn en(&self) -> String {
        match self {
            CommandError::MissingRunId { line } => {
                format!("line {line}: `/use` needs a run id, e.g. `/use 40714803265`")
            }
            CommandError::NotDigits { line, arg } => {
                format!("line {line}: run id {} must be decimal digits only", code(arg))
            }
            CommandError::RunIdTooLarge { line, arg } => format!("line {line}: run id {} is too large", code(arg)),
            CommandError::TrailingText { line, extra } => {
                format!("line {line}: the command must be alone on its line (unexpected {})", code(extra))
            }
        }
    }

    /// Markdown-safe Chinese message.
    pub fn zh(&self) -> String {
        match self {
            CommandError::MissingRunId { line } => format!("第 {line} 行：`/use` 需要运行 ID，例如 `/use 40714803265`"),
            CommandError::NotDigits { line, arg } => format!("第 {line} 行：运行 ID {} 只能包含十进制数字", code(arg)),
            CommandError::RunIdTooLarge { line, arg } => format!("第 {line} 行：运行 ID {} 过大", code(arg)),
            CommandError::TrailingText { line, extra } => {
                format!("第 {line} 行：指令必须独占一行（多余内容 {}）", code(extra))
            }
        }
    }
}

/// What one comment body asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scan {
    /// No line starts with a command word (outside code, quotes and HTML).
    Nothing,
    /// The last well-formed command of the comment (upstream: last match is the intent).
    Command(ReuseCommand),
    /// At least one command line is malformed: the whole comment is refused (decision I3).
    Malformed(Vec<CommandError>),
}

/// Bound on the body scanned; GitHub caps comments at 65,536 characters.
const MAX_BODY_BYTES: usize = 262_144;

/// Scans a comment body for reuse commands.
pub fn scan(body: &str) -> Scan {
    let body = truncate_to_char_boundary(body, MAX_BODY_BYTES);
    let excluded = excluded_ranges(body);
    let mut last = None;
    let mut errors = Vec::new();
    let mut start = 0;
    for (index, raw) in body.split_inclusive('\n').enumerate() {
        let line_range = start..start + raw.len();
        start = line_range.end;
        let content = raw.trim_start_matches([' ', '\t']);
        let content_start = line_range.end - content.len();
        let content = content.trim_end_matches(['\n', '\r', ' ', '\t']);
        if content.is_empty()
            || excluded.iter().any(|r| r.start < content_start + content.len() && content_start < r.end)
        {
            continue;
        }
        match parse_line(content, index + 1) {
            None => {}
            Some(Ok(cmd)) => last = Some(cmd),
            Some(Err(err)) => errors.push(err),
        }
    }
    match (errors.is_empty(), last) {
        (false, _) => Scan::Malformed(errors),
        (true, Some(cmd)) => Scan::Command(cmd),
        (true, None) => Scan::Nothing,
    }
}

fn truncate_to_char_boundary(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// One line (trimmed of horizontal whitespace): `None` unless its first word is a command.
fn parse_line(line: &str, number: usize) -> Option<Result<ReuseCommand, CommandError>> {
    let mut words = line.split([' ', '\t']).filter(|w| !w.is_empty());
    let name = CommandName::from_token(words.next()?)?;
    let arg = words.next();
    if let Some(extra) = words.next() {
        return Some(Err(CommandError::TrailingText { line: number, extra: extra.to_string() }));
    }
    Some(match (name, arg) {
        (CommandName::Use, None) => Err(CommandError::MissingRunId { line: number }),
        (_, None) => Ok(ReuseCommand { name, run_id: None, sweep: None }),
        (_, Some(arg)) if SweepRef::parse(arg).is_some() => {
            Ok(ReuseCommand { name, run_id: None, sweep: SweepRef::parse(arg) })
        }
        (_, Some(arg)) if !arg.bytes().all(|b| b.is_ascii_digit()) => {
            // `/reuse-sweep-run please` is text after the command rather than a bad id.
            if name == CommandName::ReuseSweepRun && !arg.bytes().any(|b| b.is_ascii_digit()) {
                Err(CommandError::TrailingText { line: number, extra: arg.to_string() })
            } else {
                Err(CommandError::NotDigits { line: number, arg: arg.to_string() })
            }
        }
        (_, Some(arg)) => match arg.parse::<u64>() {
            Ok(id) => Ok(ReuseCommand { name, run_id: Some(id), sweep: None }),
            Err(_) => Err(CommandError::RunIdTooLarge { line: number, arg: arg.to_string() }),
        },
    })
}

/// Byte ranges that never hold commands: code blocks, inline code, block quotes, HTML.
fn excluded_ranges(body: &str) -> Vec<Range<usize>> {
    Parser::new_ext(body, Options::empty())
        .into_offset_iter()
        .filter_map(|(event, range)| match event {
            Event::Start(Tag::CodeBlock(_) | Tag::BlockQuote(_) | Tag::HtmlBlock)
            | Event::Code(_)
            | Event::Html(_)
            | Event::InlineHtml(_) => Some(range),
            _ => None,
        })
        .collect()
}

/// `author_association` values whose commands count (spec 10 §3.3).
pub fn association_may_command(association: &str) -> bool {
    matches!(association, "OWNER" | "MEMBER" | "COLLABORATOR")
}

/// A PR conversation comment, as the resolver needs it.
#[derive(Debug, Clone)]
pub struct CommentView<'a> {
    pub id: u64,
    pub author: &'a str,
    pub author_association: &'a str,
    pub body: &'a str,
    pub created_at: DateTime<Utc>,
}

/// The command in force on a PR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authorization {
    pub comment_id: u64,
    pub author: String,
    pub author_association: String,
    pub command: ReuseCommand,
    /// When the comment holding the command was posted.
    pub posted_at: DateTime<Utc>,
}

/// The newest authorized command across both names, by the time its comment was posted
/// (upstream's order, InferenceX #3192; decision RV6). An edit re-evaluates the comment's own
/// command (answered by a reaction, so never silently) but does not move it past newer ones.
pub fn resolve(comments: &[CommentView<'_>], bot_login: &str) -> Option<Authorization> {
    comments
        .iter()
        .filter(|c| !c.author.eq_ignore_ascii_case(bot_login) && association_may_command(c.author_association))
        .filter_map(|c| match scan(c.body) {
            Scan::Command(command) => Some(Authorization {
                comment_id: c.id,
                author: c.author.to_string(),
                author_association: c.author_association.to_string(),
                command,
                posted_at: c.created_at,
            }),
            Scan::Nothing | Scan::Malformed(_) => None,
        })
        .max_by_key(|a| (a.posted_at, a.comment_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pinned(name: CommandName, id: u64) -> Scan {
        Scan::Command(ReuseCommand { name, run_id: Some(id), sweep: None })
    }

    const BARE: Scan = Scan::Command(ReuseCommand { name: CommandName::ReuseSweepRun, run_id: None, sweep: None });

    #[test]
    fn valid_forms_from_the_spec_table() {
        assert_eq!(scan("/reuse-sweep-run"), BARE);
        assert_eq!(scan("  /reuse-sweep-run  "), BARE);
        assert_eq!(scan("/reuse-sweep-run 123456789"), pinned(CommandName::ReuseSweepRun, 123456789));
        assert_eq!(scan("/reuse-sweep-run\t123"), pinned(CommandName::ReuseSweepRun, 123));
        assert_eq!(scan("Looks good.\n\n/reuse-sweep-run 7\r\nthanks"), pinned(CommandName::ReuseSweepRun, 7));
        assert_eq!(scan("/use 40714803265"), pinned(CommandName::Use, 40714803265));
        assert_eq!(scan("   /use   42 \t\n"), pinned(CommandName::Use, 42));
    }

    #[test]
    fn a_sweepgate_sweep_id_is_a_pin_too() {
        let Scan::Command(command) = scan("/reuse-sweep-run pr160-0123456789-a2") else { panic!("not a command") };
        let sweep = command.sweep.unwrap();
        assert_eq!((command.run_id, sweep.pr, sweep.head(), sweep.attempt), (None, 160, "0123456789", 2));
        assert_eq!(command.to_string(), "/reuse-sweep-run pr160-0123456789-a2");
        assert!(matches!(scan("/use pr7-abcdefabcd-a1"), Scan::Command(ReuseCommand { sweep: Some(_), .. })));
        for bad in ["pr160-0123456789", "pr160-012345678-a1", "pr160-0123456789-a0", "pr0-0123456789-a1"] {
            assert!(SweepRef::parse(bad).is_none(), "{bad}");
            assert!(matches!(scan(&format!("/use {bad}")), Scan::Malformed(_)), "{bad}");
        }
        assert!(SweepRef::parse("pr1-ABCDEF0123-a1").is_none(), "the id is lowercase hex");
        assert!(SweepRef::parse("pr1-abcdef0123-a1-x").is_none());
    }

    #[test]
    fn not_recognized_at_all() {
        for body in [
            "please run /reuse-sweep-run 1 after merge",
            "> /reuse-sweep-run",
            "> /use 12",
            "/Reuse-Sweep-Run",
            "/USE 12",
            "/reuse-sweep-runs 1",
            "/used 12",
            "- /use 12",
            "`/use 12`",
            "text `/use 12`",
            "",
        ] {
            assert_eq!(scan(body), Scan::Nothing, "{body:?}");
        }
    }

    #[test]
    fn trailing_text_and_two_numbers_are_malformed() {
        assert_eq!(
            scan("/reuse-sweep-run please"),
            Scan::Malformed(vec![CommandError::TrailingText { line: 1, extra: "please".into() }])
        );
        assert_eq!(scan("/use 1 2"), Scan::Malformed(vec![CommandError::TrailingText { line: 1, extra: "2".into() }]));
    }

    #[test]
    fn bare_use_and_non_digit_ids_are_malformed() {
        assert_eq!(scan("/use"), Scan::Malformed(vec![CommandError::MissingRunId { line: 1 }]));
        assert_eq!(scan("/use abc"), Scan::Malformed(vec![CommandError::NotDigits { line: 1, arg: "abc".into() }]));
        assert_eq!(scan("/use 12a"), Scan::Malformed(vec![CommandError::NotDigits { line: 1, arg: "12a".into() }]));
        assert_eq!(scan("/use -5"), Scan::Malformed(vec![CommandError::NotDigits { line: 1, arg: "-5".into() }]));
        assert_eq!(scan("/use ١٢"), Scan::Malformed(vec![CommandError::NotDigits { line: 1, arg: "١٢".into() }]));
        let huge = "/use 99999999999999999999999";
        assert!(matches!(scan(huge), Scan::Malformed(e) if e[0].code() == "run-id-too-large"));
    }

    #[test]
    fn newline_does_not_join_a_pin_to_the_command() {
        assert_eq!(scan("/reuse-sweep-run\n\n12345"), BARE);
        assert_eq!(scan("/use\n12345"), Scan::Malformed(vec![CommandError::MissingRunId { line: 1 }]));
    }

    #[test]
    fn leading_zeros_are_accepted_as_upstream() {
        assert_eq!(scan("/use 0012"), pinned(CommandName::Use, 12));
    }

    #[test]
    fn code_blocks_quotes_and_html_are_ignored() {
        assert_eq!(scan("```\n/use 12\n```"), Scan::Nothing);
        assert_eq!(scan("~~~text\n/reuse-sweep-run\n~~~"), Scan::Nothing);
        assert_eq!(scan("    /use 12"), Scan::Nothing, "indented code block");
        assert_eq!(scan("\t/use 12"), Scan::Nothing, "a leading tab indents a code block too");
        assert_eq!(scan("> quoted\n> /use 12\n"), Scan::Nothing);
        assert_eq!(scan("<!--\n/use 12\n-->"), Scan::Nothing);
        assert_eq!(scan("<details>\n/use 12\n</details>"), Scan::Nothing);
        assert_eq!(scan("```\n/use 1\n```\n/use 2"), pinned(CommandName::Use, 2));
    }

    #[test]
    fn last_command_of_a_comment_is_its_intent() {
        assert_eq!(scan("/use 1\n/reuse-sweep-run"), BARE);
        assert_eq!(scan("/reuse-sweep-run\n/use 9"), pinned(CommandName::Use, 9));
    }

    #[test]
    fn a_malformed_line_refuses_the_whole_comment() {
        let s = scan("/use 1\n/use x");
        assert_eq!(s, Scan::Malformed(vec![CommandError::NotDigits { line: 2, arg: "x".into() }]));
    }

    #[test]
    fn error_messages_in_both_languages() {
        let e = CommandError::MissingRunId { line: 3 };
        assert_eq!(e.en(), "line 3: `/use` needs a run id, e.g. `/use 40714803265`");
        assert!(e.zh().starts_with("第 3 行"));
        let forged = CommandError::NotDigits { line: 1, arg: "`@eve`".into() };
        assert_eq!(forged.en(), "line 1: run id `` `@eve` `` must be decimal digits only");
    }

    #[test]
    fn huge_bodies_do_not_panic() {
        let body = format!("{}\n/use 5", "é".repeat(MAX_BODY_BYTES));
        assert_eq!(scan(&body), Scan::Nothing, "the command lies beyond the scanned bound");
        assert_eq!(scan(&"`".repeat(10_000)), Scan::Nothing);
    }

    fn at(minute: u32) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(&format!("2026-09-01T10:{minute:02}:00Z")).unwrap().with_timezone(&Utc)
    }

    fn comment<'a>(id: u64, assoc: &'a str, body: &'a str, created: u32) -> CommentView<'a> {
        CommentView { id, author: "alice", author_association: assoc, body, created_at: at(created) }
    }

    #[test]
    fn newest_authorized_command_wins_across_spellings() {
        let comments = [comment(1, "MEMBER", "/use 100", 1), comment(2, "COLLABORATOR", "/reuse-sweep-run", 2)];
        let auth = resolve(&comments, "sweepgate[bot]").unwrap();
        assert_eq!((auth.comment_id, auth.command.run_id), (2, None), "a newer bare command unpins");
    }

    #[test]
    fn unauthorized_and_bot_comments_never_count() {
        let mut bot = comment(3, "NONE", "/use 300", 3);
        bot.author = "sweepgate[bot]";
        bot.author_association = "OWNER";
        let comments = [
            comment(1, "OWNER", "/use 100", 1),
            comment(2, "CONTRIBUTOR", "/use 200", 2),
            comment(4, "NONE", "/use 400", 4),
            comment(5, "FIRST_TIME_CONTRIBUTOR", "/use 500", 5),
            bot,
        ];
        assert_eq!(resolve(&comments, "sweepgate[bot]").unwrap().command.run_id, Some(100));
        assert_eq!(resolve(&comments[1..], "sweepgate[bot]"), None);
    }

    #[test]
    fn editing_an_old_comment_never_moves_it_past_a_newer_command() {
        // Comment 1 was edited (its command or the text around it) after comment 2 pinned 200:
        // the newer comment stays in force, and so no acknowledged grant is lost.
        let comments = [comment(1, "OWNER", "/use 100\n\ntypo fixed", 1), comment(2, "OWNER", "/use 200", 5)];
        let auth = resolve(&comments, "bot").unwrap();
        assert_eq!((auth.command.run_id, auth.posted_at), (Some(200), at(5)));
        // A command edited into the newest comment is what is in force.
        let comments = [comment(1, "OWNER", "/use 100", 1), comment(2, "OWNER", "/use 300", 5)];
        assert_eq!(resolve(&comments, "bot").unwrap().command.run_id, Some(300));
    }

    #[test]
    fn malformed_or_removed_commands_do_not_authorize() {
        let comments = [comment(1, "OWNER", "/use 100", 1), comment(2, "OWNER", "/use nope", 2)];
        assert_eq!(resolve(&comments, "bot").unwrap().comment_id, 1);
        let edited_away = [comment(1, "OWNER", "never mind", 1)];
        assert_eq!(resolve(&edited_away, "bot"), None);
    }
}
