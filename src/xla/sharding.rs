//! The `mhlo.sharding` annotations of an SPMD program (issue 25, src/xla/spmd.rs):
//! how each argument and result of `@main` lies across N devices, written into the
//! StableHLO text a [`Function`](super::stablehlo::Function) finishes.

/// How an argument or result of an SPMD program lies across its devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sharding {
    /// Every device holds all of it.
    Replicated,
    /// Split along axis 0 into equal shards, shard `d` on device `d` (the batch,
    /// and a weight's `"rows"` in `[run.sharding]`).
    Batch,
    /// Split along the last axis into equal shards, shard `d` on device `d` (a
    /// weight's `"columns"` in `[run.sharding]`: tensor parallel).
    Columns,
}

impl Sharding {
    /// The `mhlo.sharding` text for an array of `rank` over `n` devices
    /// (XLA's HloSharding syntax): `{replicated}`, or `{devices=[n,1,…]0,1,…,n−1}`
    /// — the tile grid (n along axis 0, 1 along every other axis), then the devices
    /// in tile order; [`Sharding::Columns`] puts the n on the last axis.
    pub fn attribute(self, rank: usize, n: usize) -> String {
        match self {
            Sharding::Batch | Sharding::Columns if rank > 0 && n > 1 => {
                let mut grid = vec!["1".to_string(); rank];
                let at = if self == Sharding::Batch { 0 } else { rank - 1 };
                grid[at] = n.to_string();
                let ids: Vec<String> = (0..n).map(|d| d.to_string()).collect();
                format!("{{devices=[{}]{}}}", grid.join(","), ids.join(","))
            }
            _ => "{replicated}".to_string(),
        }
    }
}

impl Sharding {
    /// The axis this sharding splits of an array of `rank` (`None`: replicated, or
    /// a rank-0 array).
    pub fn axis(self, rank: usize) -> Option<usize> {
        match self {
            Sharding::Replicated => None,
            _ if rank == 0 => None,
            Sharding::Batch => Some(0),
            Sharding::Columns => Some(rank - 1),
        }
    }
}

/// How one result of an SPMD program came back: whole on every device, or split
/// along an axis into one shard per device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    Whole,
    Split(usize),
}

/// The layout of a result of global shape `global` whose buffer on each device has
/// shape `local` (one entry per device), when XLA chose it: the same shape on every
/// device is the whole value; one axis divided by the device count is a split; any
/// other tiling is `None`.
pub fn layout_of(global: &[usize], local: &[Vec<usize>]) -> Option<Layout> {
    let n = local.len();
    let first = local.first()?;
    if local.iter().any(|l| l != first) || first.len() != global.len() {
        return None;
    }
    let differing: Vec<usize> = (0..global.len())
        .filter(|&a| first[a] != global[a])
        .collect();
    match differing.as_slice() {
        [] => Some(Layout::Whole),
        [a] if first[*a] * n == global[*a] => Some(Layout::Split(*a)),
        _ => None,
    }
}

/// Whether the parameter path `path` (dotted, as `hospes.nomina_foliorum` names
/// the leaves: `strata.0.w1`) fits `pattern` of `[run.sharding]`, where a `*` part
/// stands for any one part (`strata.*.w1`).
pub fn path_matches(pattern: &str, path: &str) -> bool {
    let (mut p, mut q) = (pattern.split('.'), path.split('.'));
    loop {
        match (p.next(), q.next()) {
            (None, None) => return true,
            (Some(a), Some(b)) if a == "*" || a == b => {}
            _ => return false,
        }
    }
}

/// The index of the first rule of `rules` that fits `path`.
pub fn rule_index(rules: &[(String, Sharding)], path: &str) -> Option<usize> {
    rules.iter().position(|(p, _)| path_matches(p, path))
}

/// The sharding the first rule of `rules` that fits `path` gives it.
pub fn rule_for(rules: &[(String, Sharding)], path: &str) -> Option<Sharding> {
    rule_index(rules, path).map(|i| rules[i].1)
}

/// The rank of an MLIR tensor type's text (`tensor<8x3xf32>` is 2).
fn rank_of(ty: &str) -> usize {
    ty.trim()
        .trim_start_matches("tensor<")
        .trim_end_matches('>')
        .matches('x')
        .count()
}

/// The `@main` header's parameter types and result types, and where the header's
/// parameter list and result list lie in `text`.
struct Header {
    params: (usize, usize),
    results: (usize, usize),
}

fn header(text: &str) -> Option<Header> {
    let open = text.find("func.func public @main(")? + "func.func public @main(".len();
    let arrow = open + text[open..].find(") -> (")?;
    let res_open = arrow + ") -> (".len();
    let res_close = res_open + text[res_open..].find(") {")?;
    Some(Header {
        params: (open, arrow),
        results: (res_open, res_close),
    })
}

fn split_types(list: &str) -> Vec<&str> {
    if list.trim().is_empty() {
        Vec::new()
    } else {
        list.split(", ").collect()
    }
}

/// How many results the module's `@main` returns.
pub fn result_count(text: &str) -> Option<usize> {
    let h = header(text)?;
    Some(split_types(&text[h.results.0..h.results.1]).len())
}

/// `text` (a module as [`Function::finish`](super::stablehlo::Function::finish)
/// writes it) with `mhlo.sharding` on every argument and result of `@main` for `n`
/// devices, and the module's `mhlo.num_partitions` / `mhlo.num_replicas`.
pub fn annotate(
    text: &str,
    args: &[Sharding],
    results: &[Sharding],
    n: usize,
) -> Result<String, String> {
    annotate_some(text, args, Some(results), n)
}

/// [`annotate`] with the results left without an `mhlo.sharding`: compiled with
/// propagation to the outputs ([`SpmdOptions`](super::proto::SpmdOptions)), XLA
/// chooses how each lies (a split parameter's update split like it).
pub fn annotate_arguments(text: &str, args: &[Sharding], n: usize) -> Result<String, String> {
    annotate_some(text, args, None, n)
}

/// The global types of `@main`'s results (`tensor<8x3xf32>`), in order.
pub fn result_types(text: &str) -> Option<Vec<String>> {
    let h = header(text)?;
    Some(
        split_types(&text[h.results.0..h.results.1])
            .iter()
            .map(|t| t.trim().to_string())
            .collect(),
    )
}

/// The dimensions of an MLIR tensor type's text (`tensor<8x3xf32>` is `[8, 3]`).
pub fn dims_of(ty: &str) -> Vec<usize> {
    let inner = ty
        .trim()
        .trim_start_matches("tensor<")
        .trim_end_matches('>');
    let mut parts: Vec<&str> = inner.split('x').collect();
    parts.pop();
    parts.iter().filter_map(|p| p.parse().ok()).collect()
}

fn annotate_some(
    text: &str,
    args: &[Sharding],
    results: Option<&[Sharding]>,
    n: usize,
) -> Result<String, String> {
    let h = header(text).ok_or("no `func.func public @main` header")?;
    let params = split_types(&text[h.params.0..h.params.1]);
    let outs = split_types(&text[h.results.0..h.results.1]);
    if params.len() != args.len() || results.is_some_and(|r| r.len() != outs.len()) {
        return Err(format!(
            "{} argument and {} result shardings for a program of {} and {}",
            args.len(),
            results.map_or(0, <[Sharding]>::len),
            params.len(),
            outs.len()
        ));
    }
    let params: Vec<String> = params
        .iter()
        .zip(args)
        .map(|(p, s)| {
            let ty = p.split_once(": ").map_or(*p, |(_, t)| t);
            format!(
                "{p} {{mhlo.sharding = \"{}\"}}",
                s.attribute(rank_of(ty), n)
            )
        })
        .collect();
    let outs: Vec<String> = match results {
        Some(results) => outs
            .iter()
            .zip(results)
            .map(|(t, s)| format!("{t} {{mhlo.sharding = \"{}\"}}", s.attribute(rank_of(t), n)))
            .collect(),
        None => outs.iter().map(|t| t.to_string()).collect(),
    };
    let body = format!(
        "{}{}) -> ({}{}",
        &text[..h.params.0],
        params.join(", "),
        outs.join(", "),
        &text[h.results.1..]
    );
    let module = format!(
        "module @faber attributes {{mhlo.num_partitions = {n} : i32, mhlo.num_replicas = 1 : i32}} {{"
    );
    Ok(body.replacen("module @faber {", &module, 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xla::exec::ElementType;
    use crate::xla::stablehlo::TensorType;

    #[test]
    fn sharding_attributes_in_hlo_syntax() {
        assert_eq!(Sharding::Batch.attribute(2, 4), "{devices=[4,1]0,1,2,3}");
        assert_eq!(Sharding::Batch.attribute(1, 2), "{devices=[2]0,1}");
        assert_eq!(Sharding::Batch.attribute(3, 2), "{devices=[2,1,1]0,1}");
        assert_eq!(Sharding::Replicated.attribute(2, 4), "{replicated}");
        assert_eq!(Sharding::Columns.attribute(2, 2), "{devices=[1,2]0,1}");
        assert_eq!(Sharding::Columns.attribute(1, 2), "{devices=[2]0,1}");
        assert_eq!(Sharding::Columns.attribute(0, 2), "{replicated}");
        // One device, or a rank-0 value, has nothing to split.
        assert_eq!(Sharding::Batch.attribute(2, 1), "{replicated}");
        assert_eq!(Sharding::Batch.attribute(0, 2), "{replicated}");
    }

    #[test]
    fn paths_match_with_stars() {
        assert!(path_matches("strata.*.w1", "strata.0.w1"));
        assert!(path_matches("strata.*.w1", "strata.11.w1"));
        assert!(!path_matches("strata.*.w1", "strata.0.w2"));
        assert!(!path_matches("strata.*.w1", "strata.0.w1.x"));
        assert!(!path_matches("strata.*", "strata.0.w1"));
        assert!(path_matches("wh", "wh"));
        let rules = vec![("wh".to_string(), Sharding::Columns)];
        assert_eq!(rule_for(&rules, "wh"), Some(Sharding::Columns));
        assert_eq!(rule_for(&rules, "wte"), None);
        assert_eq!(Sharding::Columns.axis(2), Some(1));
        assert_eq!(Sharding::Batch.axis(2), Some(0));
        assert_eq!(Sharding::Columns.axis(0), None);
    }

    #[test]
    fn annotate_marks_every_argument_and_result() {
        use crate::xla::stablehlo::{Function, Reduction};
        let x = TensorType::new(ElementType::F32, &[8, 3]);
        let w = TensorType::new(ElementType::F32, &[3]);
        let (mut f, p) = Function::new(&[x, w]);
        let s = f.reduce(p[0], &[0], Reduction::Sum);
        let text = f.finish(&[s, p[1]]);
        assert_eq!(result_count(&text), Some(2));
        let out = annotate(
            &text,
            &[Sharding::Batch, Sharding::Replicated],
            &[Sharding::Replicated, Sharding::Replicated],
            2,
        )
        .unwrap();
        assert!(out.starts_with(
            "module @faber attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {"
        ));
        assert!(out.contains(
            "@main(%arg0: tensor<8x3xf32> {mhlo.sharding = \"{devices=[2,1]0,1}\"}, \
             %arg1: tensor<3xf32> {mhlo.sharding = \"{replicated}\"}) -> \
             (tensor<3xf32> {mhlo.sharding = \"{replicated}\"}, \
             tensor<3xf32> {mhlo.sharding = \"{replicated}\"}) {"
        ));
        assert!(annotate(&text, &[Sharding::Batch], &[], 2).is_err());
        // Without result shardings the results keep their bare types.
        let open = annotate_arguments(&text, &[Sharding::Batch, Sharding::Replicated], 2).unwrap();
        assert!(open.contains("-> (tensor<3xf32>, tensor<3xf32>) {"));
        assert_eq!(
            result_types(&open).unwrap(),
            vec!["tensor<3xf32>".to_string(), "tensor<3xf32>".to_string()]
        );
        assert_eq!(dims_of("tensor<8x3xf32>"), vec![8, 3]);
        assert_eq!(dims_of("tensor<f32>"), Vec::<usize>::new());
    }

    #[test]
    fn result_layouts_from_shard_shapes() {
        let g = [8, 6];
        assert_eq!(
            layout_of(&g, &[vec![8, 6], vec![8, 6]]),
            Some(Layout::Whole)
        );
        assert_eq!(
            layout_of(&g, &[vec![8, 3], vec![8, 3]]),
            Some(Layout::Split(1))
        );
        assert_eq!(
            layout_of(&g, &[vec![4, 6], vec![4, 6]]),
            Some(Layout::Split(0))
        );
        // Four devices tiling two axes 2 × 2, or one axis split in two and the
        // halves replicated: not a layout faber keeps.
        let four = vec![vec![4, 3]; 4];
        assert_eq!(layout_of(&g, &four), None);
        assert_eq!(layout_of(&g, &vec![vec![4, 6]; 4]), None);
        assert_eq!(layout_of(&g, &[vec![8, 3], vec![8, 6]]), None);
        assert_eq!(layout_of(&[], &[vec![], vec![]]), Some(Layout::Whole));
    }
}
