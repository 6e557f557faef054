//! gradus:plot's SVG, parsed: the file is well-formed XML (a small parser below: tags
//! nest and close, attributes are quoted, entities are XML's five), and what a reader
//! needs is there — axes, tick labels in increasing order, both axis titles, one legend
//! entry per series, every finite point inside the plot area — with one point (a dot on
//! the y axis: the step-0 point) and with 10 000 (one polyline of 10 000 points).

use std::collections::HashMap;
use std::process::Command;

#[derive(Debug)]
struct Element {
    name: String,
    attrs: HashMap<String, String>,
    /// Character data directly inside, entities decoded.
    text: String,
}

fn unescape(s: &str) -> String {
    let out = s
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'");
    assert!(
        !out.replace("&amp;", "").contains('&'),
        "an unknown entity in {s:?}"
    );
    out.replace("&amp;", "&")
}

/// Every element in document order; panics on anything that is not well-formed.
fn parse(xml: &str) -> Vec<Element> {
    let mut out: Vec<Element> = Vec::new();
    let mut open: Vec<(String, usize)> = Vec::new();
    let mut rest = xml;
    while let Some(lt) = rest.find('<') {
        let text = &rest[..lt];
        if let Some((_, k)) = open.last() {
            out[*k].text.push_str(&unescape(text));
        } else {
            assert!(text.trim().is_empty(), "text outside the root: {text:?}");
        }
        let gt = rest[lt..].find('>').expect("an unclosed tag") + lt;
        let tag = &rest[lt + 1..gt];
        rest = &rest[gt + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            let (top, _) = open.pop().expect("a closing tag without an opening one");
            assert_eq!(top, name.trim(), "tags do not nest");
            continue;
        }
        let self_closing = tag.ends_with('/');
        let body = tag.trim_end_matches('/');
        let name_end = body.find(char::is_whitespace).unwrap_or(body.len());
        let name = body[..name_end].to_string();
        assert!(
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric()),
            "bad tag name {name:?}"
        );
        let mut attrs = HashMap::new();
        let mut a = body[name_end..].trim_start();
        while !a.is_empty() {
            let eq = a.find('=').expect("an attribute without a value");
            let key = a[..eq].trim().to_string();
            let after = &a[eq + 1..];
            assert!(after.starts_with('"'), "an unquoted attribute {key}");
            let close = after[1..].find('"').expect("an unclosed attribute") + 1;
            assert!(
                attrs
                    .insert(key.clone(), unescape(&after[1..close]))
                    .is_none(),
                "attribute {key} twice"
            );
            a = after[close + 1..].trim_start();
        }
        out.push(Element {
            name: name.clone(),
            attrs,
            text: String::new(),
        });
        if !self_closing {
            open.push((name, out.len() - 1));
        }
    }
    assert!(rest.trim().is_empty(), "text after the root");
    assert!(open.is_empty(), "unclosed elements {open:?}");
    assert_eq!(out[0].name, "svg");
    out
}

fn class<'a>(els: &'a [Element], c: &str) -> Vec<&'a Element> {
    els.iter()
        .filter(|e| e.attrs.get("class").is_some_and(|v| v == c))
        .collect()
}

fn num(e: &Element, a: &str) -> f64 {
    e.attrs[a]
        .parse()
        .unwrap_or_else(|_| panic!("{a} of {e:?}"))
}

/// Runs a program that writes `one.svg`, `many.svg` and `odd.svg` into a fresh directory.
fn charts() -> HashMap<&'static str, Vec<Element>> {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("faber-plot-svg");
    std::fs::create_dir_all(&dir).unwrap();
    let program = r#"importa ex "gradus:plot" privata plot
incipit {
    hospes.scribe_textum("one.svg", plot.svg([plot.series("train", [0.0], [2.302])], "step", "loss"))
    varia lista<f32> xs ← []
    varia lista<f32> a ← []
    varia lista<f32> b ← []
    itera ab 0 ‥ 10000 fixum i {
        xs.appende(i)
        a.appende(3.0 * (-(i ↦ fractus) / 2000.0).exponens())
        b.appende(0.003 * (1.0 - i / 10000.0))
    }
    hospes.scribe_textum("many.svg", plot.svg([plot.series("train", xs, a), plot.series("learning rate", xs, b)], "step", "loss"))
    hospes.scribe_textum("odd.svg", plot.svg([plot.series("a<b & \"c\"", [0.0, 1.0, 2.0, 3.0], [1.0, 0.0 / 0.0, 3.0, -2.0])], "x & y", "<y>"))
}
"#;
    std::fs::write(dir.join("main.fab"), program).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_faber"))
        .args(["run", "main.fab"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut m = HashMap::new();
    for f in ["one.svg", "many.svg", "odd.svg"] {
        m.insert(f, parse(&std::fs::read_to_string(dir.join(f)).unwrap()));
    }
    let _ = std::fs::remove_dir_all(&dir);
    m
}

/// Tick labels of one axis: at least two, increasing, each a plain decimal number.
fn ticks(els: &[Element], axis: &str) -> Vec<f64> {
    let labels: Vec<f64> = class(els, &format!("tick-label-{axis}"))
        .iter()
        .map(|e| {
            e.text
                .parse()
                .unwrap_or_else(|_| panic!("tick label {:?}", e.text))
        })
        .collect();
    assert!(labels.len() >= 2, "{axis}: {labels:?}");
    assert!(labels.windows(2).all(|w| w[0] < w[1]), "{axis}: {labels:?}");
    labels
}

fn common(els: &[Element], names: &[&str], titles: (&str, &str)) {
    assert_eq!(class(els, "axis").len(), 2);
    assert_eq!(class(els, "title-x")[0].text, titles.0);
    assert_eq!(class(els, "title-y")[0].text, titles.1);
    let legend: Vec<&str> = els
        .iter()
        .filter(|e| {
            // the legend's labels stand at x = 590, right of their colour swatches
            e.name == "text" && e.attrs.get("x").is_some_and(|x| x == "590")
        })
        .map(|e| e.text.as_str())
        .collect();
    assert_eq!(legend, names);
}

#[test]
fn charts_parse_and_carry_axes_ticks_titles_and_legend() {
    let all = charts();

    // One point: a dot at x = 0, on the y axis (x = 80 in the 720×440 frame).
    let one = &all["one.svg"];
    common(one, &["train"], ("step", "loss"));
    assert!(one.iter().all(|e| e.name != "polyline"));
    let dots: Vec<&Element> = one.iter().filter(|e| e.name == "circle").collect();
    assert_eq!(dots.len(), 1);
    assert_eq!(num(dots[0], "cx"), 80.0);
    assert!((20.0..=380.0).contains(&num(dots[0], "cy")));
    let xt = ticks(one, "x");
    assert_eq!(xt[0], 0.0);
    let yt = ticks(one, "y");
    assert!(yt[0] <= 2.302 && 2.302 <= *yt.last().unwrap(), "{yt:?}");

    // 10 000 points: one polyline each, every point inside the plot area, x increasing.
    let many = &all["many.svg"];
    common(many, &["train", "learning rate"], ("step", "loss"));
    let lines: Vec<&Element> = many.iter().filter(|e| e.name == "polyline").collect();
    assert_eq!(lines.len(), 2);
    for l in &lines {
        let pts: Vec<(f64, f64)> = l.attrs["points"]
            .split_whitespace()
            .map(|p| {
                let (x, y) = p.split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            })
            .collect();
        assert_eq!(pts.len(), 10_000);
        assert_eq!(pts[0].0, 80.0, "the step-0 point is on the y axis");
        assert!(pts
            .iter()
            .all(|&(x, y)| (80.0..=700.0).contains(&x) && (20.0..=380.0).contains(&y)));
        assert!(pts.windows(2).all(|w| w[0].0 <= w[1].0));
    }
    assert!(
        many.iter().all(|e| e.name != "circle"),
        "no dots on dense series"
    );
    let xt = ticks(many, "x");
    assert_eq!((xt[0], *xt.last().unwrap()), (0.0, 10000.0));
    assert!(xt.len() <= 11, "{xt:?}");

    // Escaped names and titles; the NaN point is left out (3 of 4 points drawn).
    let odd = &all["odd.svg"];
    common(odd, &["a<b & \"c\""], ("x & y", "<y>"));
    let line = odd.iter().find(|e| e.name == "polyline").unwrap();
    assert_eq!(line.attrs["points"].split_whitespace().count(), 3);
    assert_eq!(odd.iter().filter(|e| e.name == "circle").count(), 3);
    let yt = ticks(odd, "y");
    assert!(yt[0] <= -2.0 && *yt.last().unwrap() >= 3.0, "{yt:?}");
}
