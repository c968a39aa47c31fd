//! Tables as the Python admin commands print them: prettytable with `align = 'l'`, as
//! oslo.upgradecheck (`hrules=ALL`) and cliff's table formatter (header rule only) do.
//! Multi-line cells take one text line each; the column width is the widest line.

/// Render `rows` under `headers`. `rule_every_row`: prettytable's `hrules=ALL` (a rule after
/// every row) instead of FRAME (rules around the header and at the end only).
pub fn render(headers: &[&str], rows: &[Vec<String>], rule_every_row: bool) -> String {
    let widths: Vec<usize> = headers
        .iter()
        .enumerate()
        .map(|(i, h)| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .flat_map(|c| c.split('\n'))
                .map(|l| l.chars().count())
                .chain(std::iter::once(h.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let rule = {
        let mut s = String::from("+");
        for w in &widths {
            s.push_str(&"-".repeat(w + 2));
            s.push('+');
        }
        s
    };
    let line = |cells: &[&str]| {
        let mut s = String::from("|");
        for (i, w) in widths.iter().enumerate() {
            let c = cells.get(i).copied().unwrap_or("");
            s.push(' ');
            s.push_str(c);
            s.push_str(&" ".repeat(w - c.chars().count()));
            s.push_str(" |");
        }
        s
    };
    let mut out = vec![rule.clone(), line(headers), rule.clone()];
    for row in rows {
        let split: Vec<Vec<&str>> = row.iter().map(|c| c.split('\n').collect()).collect();
        let height = split.iter().map(Vec::len).max().unwrap_or(1);
        for k in 0..height {
            let cells: Vec<&str> = split
                .iter()
                .map(|ls| ls.get(k).copied().unwrap_or(""))
                .collect();
            out.push(line(&cells));
        }
        if rule_every_row {
            out.push(rule.clone());
        }
    }
    if !rule_every_row {
        out.push(rule);
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upgrade_check_table_as_oslo_prints_it() {
        let t = render(
            &["Upgrade Check Results"],
            &[vec![
                "Check: Policy File JSON to YAML Migration\nResult: Success\nDetails: None"
                    .to_string(),
            ]],
            true,
        );
        assert_eq!(
            t,
            "+-------------------------------------------+\n\
             | Upgrade Check Results                     |\n\
             +-------------------------------------------+\n\
             | Check: Policy File JSON to YAML Migration |\n\
             | Result: Success                           |\n\
             | Details: None                             |\n\
             +-------------------------------------------+"
        );
    }
}
