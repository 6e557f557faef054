//! Host functions: the evaluator's small built-in surface for what Faber code cannot
//! express itself — files, the clock, program arguments, progress output, and generic
//! walks over parameter trees (the JAX `tree_flatten`/`tree_unflatten` pair).
//!
//! They are called as `hospes.<name>(…)`; `hospes` is an implicit module that a local
//! or an import alias of the same name shades. Libraries (`gradus:`, `norma:`) wrap
//! them in documented functions; docs/host.md lists them.

use super::Ty;

macro_rules! hosts {
    ($($variant:ident = $name:literal, $arity:expr;)*) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Host { $($variant),* }

        impl Host {
            pub fn name(self) -> &'static str {
                match self { $(Host::$variant => $name),* }
            }

            pub fn arity(self) -> usize {
                match self { $(Host::$variant => $arity),* }
            }

            pub fn from_name(name: &str) -> Option<Host> {
                match name { $($name => Some(Host::$variant),)* _ => None }
            }

            pub const ALL: &'static [Host] = &[$(Host::$variant),*];
        }
    };
}

hosts! {
    // files (UTF-8 text)
    LegeTextum = "lege_textum", 1;
    ScribeTextum = "scribe_textum", 2;
    // an output directory: created, probed for writing and locked for this run
    ParaDirectorium = "para_directorium", 1;
    LegeOctetos = "lege_octetos", 1;
    // process
    Hora = "hora", 0;
    Argumenta = "argumenta", 0;
    // `incipit argumenta name`: the command line parsed by its declarations
    // (genus id, spec text; src/ir/lower/argumenta.rs)
    ArgumentaParsa = "argumenta_parsa", 2;
    // `lege`: one line of standard input without its line break, nihil at its end
    LegeLineam = "lege_lineam", 0;
    Directorium = "directorium", 0;
    Progressus = "progressus", 1;
    ProgressusFinis = "progressus_finis", 1;
    // datasets: a numeric CSV file, one tensor of a safetensors file by name
    LegeCsv = "lege_csv", 4;
    LegeTensorem = "lege_tensorem", 2;
    // parameter trees: tensors of a genus / lista / iuncta tree, depth first
    Folia = "folia", 1;
    ExFoliis = "ex_foliis", 2;
    NominaFoliorum = "nomina_foliorum", 1;
    // the path of the first leaf holding a NaN or an infinity ("" when none)
    PrimumNonFinitum = "primum_non_finitum", 1;
    // safetensors checkpoints of a parameter tree (leaf names from nomina_foliorum)
    ServaTensores = "serva_tensores", 2;
    CargaTensores = "carga_tensores", 2;
    // a training checkpoint: its `forma`/`versio` checked, every entry read (checkpoint.rs)
    CargaCursum = "carga_cursum", 2;
    // the same checkpoint as bytes in faber's versioned envelope (src/eval/checkpoint.rs)
    TensoresAdOctetos = "tensores_ad_octetos", 1;
    TensoresExOctetis = "tensores_ex_octetis", 2;
    // JSON text (norma:json): parse (RUN025 with line:column), parse or nihil, print
    JsonSolve = "json_solve", 1;
    JsonTempta = "json_tempta", 1;
    JsonPange = "json_pange", 1;
}

impl Host {
    /// Declared parameter types (`Any` = any value; checked at run time).
    pub fn params(self) -> Vec<Ty> {
        match self {
            Host::LegeTextum
            | Host::LegeOctetos
            | Host::Progressus
            | Host::ProgressusFinis
            | Host::ParaDirectorium
            | Host::JsonSolve
            | Host::JsonTempta => vec![Ty::Text],
            Host::JsonPange => vec![Ty::Json],
            Host::ScribeTextum | Host::LegeTensorem => vec![Ty::Text, Ty::Text],
            Host::LegeCsv => vec![Ty::Text, Ty::Text, Ty::Bool, Ty::List(Box::new(Ty::Text))],
            Host::Hora | Host::Argumenta | Host::Directorium | Host::LegeLineam => vec![],
            Host::ArgumentaParsa => vec![Ty::Int, Ty::Text],
            Host::Folia
            | Host::NominaFoliorum
            | Host::PrimumNonFinitum
            | Host::TensoresAdOctetos => vec![Ty::Any],
            Host::TensoresExOctetis => vec![Ty::Bytes, Ty::Any],
            Host::ExFoliis => vec![Ty::Any, Ty::List(Box::new(tensor()))],
            Host::ServaTensores | Host::CargaTensores | Host::CargaCursum => {
                vec![Ty::Text, Ty::Any]
            }
        }
    }

    /// The result type, given the static types of the arguments: `ex_foliis` and
    /// `carga_tensores` return a tree of the same type as their tree argument.
    pub fn result(self, args: &[Ty]) -> Ty {
        match self {
            Host::LegeTextum | Host::Directorium | Host::PrimumNonFinitum | Host::JsonPange => {
                Ty::Text
            }
            Host::JsonSolve => Ty::Json,
            Host::JsonTempta => Ty::Union(vec![Ty::Json, Ty::Nihil]),
            Host::LegeOctetos | Host::TensoresAdOctetos => Ty::Bytes,
            Host::TensoresExOctetis => args.get(1).cloned().unwrap_or(Ty::Any),
            Host::ScribeTextum
            | Host::Progressus
            | Host::ProgressusFinis
            | Host::ServaTensores
            | Host::ParaDirectorium => Ty::Vacuum,
            Host::LegeCsv | Host::LegeTensorem => tensor(),
            Host::Hora => Ty::Float,
            Host::ArgumentaParsa => Ty::Any,
            Host::LegeLineam => Ty::Union(vec![Ty::Text, Ty::Nihil]),
            Host::Argumenta | Host::NominaFoliorum => Ty::List(Box::new(Ty::Text)),
            Host::Folia => Ty::List(Box::new(tensor())),
            Host::ExFoliis => args.first().cloned().unwrap_or(Ty::Any),
            Host::CargaTensores | Host::CargaCursum => args.get(1).cloned().unwrap_or(Ty::Any),
        }
    }
}

fn tensor() -> Ty {
    Ty::Tensor {
        shape: None,
        int: false,
    }
}
