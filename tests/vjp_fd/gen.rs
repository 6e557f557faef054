//! Random shapes and inputs for the finite-difference table (tests/vjp_fd_table.rs):
//! a seeded generator, parameters with a domain, and the program text of one case.

use faber::tensor::SplitMix64;

/// Where a parameter's values are drawn (uniformly, from the case's seed).
#[derive(Clone, Copy, Debug)]
pub enum Dom {
    /// [-1, 1)
    Any,
    /// [0.5, 2): inside the domain of `log`, `sqrt`, a divisor, probabilities.
    Pos,
    /// |x| in [0.2, 1), random sign: away from the kink of `relu` and the pole of
    /// `reciproca`.
    Away,
}

/// One parameter: a tensor of `shape`, or a `f32` number (`shape: None`).
#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    pub shape: Option<Vec<usize>>,
    pub dom: Dom,
}

pub struct Rng(SplitMix64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(SplitMix64::new(seed))
    }
    /// An integer in `lo..=hi`.
    pub fn int(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.0.next_u64() % (hi - lo + 1) as u64) as usize
    }
    pub fn coin(&mut self) -> bool {
        self.0.next_u64() & 1 == 1
    }
    pub fn value(&mut self, dom: Dom) -> f64 {
        let u = self.0.uniform();
        match dom {
            Dom::Any => 2.0 * u - 1.0,
            Dom::Pos => 0.5 + 1.5 * u,
            Dom::Away => {
                let m = 0.2 + 0.8 * u;
                if self.coin() {
                    m
                } else {
                    -m
                }
            }
        }
    }
    /// `rank` extents in 1..=3 (size-1 axes included).
    pub fn dims(&mut self, rank: usize) -> Vec<usize> {
        (0..rank).map(|_| self.int(1, 3)).collect()
    }
    /// A shape of rank `lo..=hi`.
    pub fn shape(&mut self, lo: usize, hi: usize) -> Vec<usize> {
        let r = self.int(lo, hi);
        self.dims(r)
    }
    /// `s` with each axis set to 1 with probability 1/3 (a broadcast operand).
    pub fn squeeze_some(&mut self, s: &[usize]) -> Vec<usize> {
        s.iter()
            .map(|&d| if self.int(0, 2) == 0 { 1 } else { d })
            .collect()
    }
    /// Two shapes that broadcast: both from one output shape, the second a suffix of
    /// it (possibly rank 0), each with some axes set to 1.
    pub fn broadcast_pair(&mut self) -> (Vec<usize>, Vec<usize>) {
        let out = self.shape(1, 3);
        let a = self.squeeze_some(&out);
        let keep = self.int(0, out.len());
        let b = self.squeeze_some(&out[out.len() - keep..]);
        (a, b)
    }
    /// A permutation of `0..n`.
    pub fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut p: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = self.int(0, i);
            p.swap(i, j);
        }
        p
    }
}

/// NumPy broadcasting of two shapes (the shapes the generator makes always fit).
pub fn broadcast(a: &[usize], b: &[usize]) -> Vec<usize> {
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            let da = if i + a.len() >= n {
                a[i + a.len() - n]
            } else {
                1
            };
            let db = if i + b.len() >= n {
                b[i + b.len() - n]
            } else {
                1
            };
            da.max(db)
        })
        .collect()
}

/// `[2, 3]` as Faber list text.
pub fn list(v: &[usize]) -> String {
    let parts: Vec<String> = v.iter().map(|d| d.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

/// A case's parameters and its scalar body, built up by the case generators.
pub struct Inst {
    pub params: Vec<Param>,
    pub body: String,
}

impl Inst {
    pub fn new() -> Inst {
        Inst {
            params: Vec::new(),
            body: String::new(),
        }
    }
    /// Adds a parameter and returns its name.
    pub fn p(&mut self, name: &str, shape: Option<Vec<usize>>, dom: Dom) -> String {
        self.params.push(Param {
            name: name.to_string(),
            shape,
            dom,
        });
        name.to_string()
    }
    pub fn t(&mut self, name: &str, shape: &[usize]) -> String {
        self.p(name, Some(shape.to_vec()), Dom::Any)
    }
    /// The body `(expr ⊙ w).summa()` with a random weight `w` of the result's shape, so
    /// every element of the result reaches the loss with its own factor.
    pub fn weighted(mut self, expr: String, out: &[usize]) -> Inst {
        let w = self.t("w", out);
        self.body = format!("({expr} ⊙ {w}).summa()");
        self
    }
    /// The body `expr * c` for an op with a number result, with a random factor `c` (so
    /// the upstream cotangent is not 1).
    pub fn scaled(mut self, expr: String) -> Inst {
        let c = self.p("c", None, Dom::Any);
        self.body = format!("{expr} * {c}");
        self
    }
}

/// The program of one case: the function `name` with its companion `grad_{name}`.
/// Each tensor parameter is declared with its shape or, when `generic[i]`, as `tf32`
/// (ranks known only at run time, the rules' other path).
pub fn program(name: &str, inst: &Inst, generic: &[bool]) -> String {
    let params: Vec<String> = inst
        .params
        .iter()
        .zip(generic)
        .map(|(p, &g)| match &p.shape {
            None => format!("f32 {}", p.name),
            Some(_) if g => format!("tf32 {}", p.name),
            Some(s) => format!("tf32{} {}", list(s), p.name),
        })
        .collect();
    format!(
        "@ radix backward \"grad_{name}\"\nfunctio {name}({}) → f32 {{\n    fixum tf32[] semen ← vacua\n    redde {}\n}}\n",
        params.join(", "),
        inst.body
    )
}
