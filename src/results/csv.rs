//! The CSV dialect of Python's `csv` module with `skipinitialspace=True` (how upstream reads
//! SMI telemetry): `,` separated, `"` quoting with `""` escapes, `\n`, `\r\n` or `\r` line ends,
//! blank lines skipped after the header, NUL refused.

/// A parsed table: the first record, then every non-blank record.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CsvError {
    #[error("line {0} contains NUL")]
    Nul(usize),
    #[error("unexpected end of data inside a quoted field")]
    UnterminatedQuote,
    #[error("file is larger than the limit")]
    TooLarge,
}

pub fn parse_csv(text: &str) -> Result<Table, CsvError> {
    let mut records: Vec<Vec<String>> = Vec::new();
    let mut record: Vec<String> = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut line = 1usize;
    // Start of a field: skip initial spaces, then maybe open a quote.
    let mut at_field_start = true;
    let mut in_quotes = false;
    let mut record_has_content = false;
    while let Some(c) = chars.next() {
        if c == '\0' {
            return Err(CsvError::Nul(line));
        }
        if in_quotes {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    chars.next();
                    field.push('"');
                } else {
                    in_quotes = false;
                }
            } else {
                if c == '\n' {
                    line += 1;
                }
                field.push(c);
            }
            continue;
        }
        match c {
            ' ' if at_field_start => record_has_content = true,
            '"' if at_field_start => {
                in_quotes = true;
                at_field_start = false;
                record_has_content = true;
            }
            ',' => {
                record.push(std::mem::take(&mut field));
                at_field_start = true;
                record_has_content = true;
            }
            '\n' | '\r' => {
                if c == '\r' && chars.peek() == Some(&'\n') {
                    chars.next();
                }
                line += 1;
                if record_has_content || !field.is_empty() {
                    record.push(std::mem::take(&mut field));
                }
                records.push(std::mem::take(&mut record));
                at_field_start = true;
                record_has_content = false;
            }
            _ => {
                field.push(c);
                at_field_start = false;
                record_has_content = true;
            }
        }
    }
    if in_quotes {
        return Err(CsvError::UnterminatedQuote);
    }
    if record_has_content || !field.is_empty() {
        record.push(field);
        records.push(record);
    }
    let mut records = records.into_iter();
    let header = records.next().unwrap_or_default();
    Ok(Table { header, rows: records.filter(|r| !r.is_empty()).collect() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cells: &[&str]) -> Vec<String> {
        cells.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn nvidia_smi_shape_with_initial_spaces() {
        let t = parse_csv("timestamp, index, power.draw [W]\n2026/08/21 14:03:15.657, 0, 329.20 W\n\n1, 2, 3\n");
        assert_eq!(t.as_ref().map(|t| t.header.clone()), Ok(row(&["timestamp", "index", "power.draw [W]"])));
        assert_eq!(
            t.map(|t| t.rows),
            Ok(vec![row(&["2026/08/21 14:03:15.657", "0", "329.20 W"]), row(&["1", "2", "3"])])
        );
    }

    #[test]
    fn quotes_crlf_and_trailing_fields() {
        let t = parse_csv("a,b\n \n\n  x ,y\n\"q\" z,w\n").unwrap_or_default();
        assert_eq!(t.rows, vec![row(&[""]), row(&["x ", "y"]), row(&["q z", "w"])], "as Python's csv reads it");
        let t = parse_csv("a,b,c\r\n\"x, y\",\"he said \"\"hi\"\"\",\r\nlast,row").unwrap_or_default();
        assert_eq!(t.rows, vec![row(&["x, y", "he said \"hi\"", ""]), row(&["last", "row"])]);
    }

    #[test]
    fn nul_and_open_quote_are_errors() {
        assert_eq!(parse_csv("a,b\n1,\0\n"), Err(CsvError::Nul(2)));
        assert_eq!(parse_csv("a,b\n\"1,2\n"), Err(CsvError::UnterminatedQuote));
        assert_eq!(parse_csv(""), Ok(Table::default()));
    }
}
