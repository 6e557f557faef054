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
    // a CLI program's command chosen by the command line (spec text; src/ir/lower/commands.rs),
    // and the record of command K (genus id, spec text, K)
    ImperiumElige = "imperium_elige", 1;
    ImperiumArgumenta = "imperium_argumenta", 3;
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
    // norma:solum, norma:consolum, norma:processus (src/eval/host_device.rs)
    ScribeOctetos = "scribe_octetos", 2;
    SolumPartem = "solum_partem", 3;
    SolumInveni = "solum_inveni", 4;
    SolumCarpe = "solum_carpe", 1;
    SolumAppone = "solum_appone", 2;
    SolumExstat = "solum_exstat", 1;
    SolumDirectoriumne = "solum_directoriumne", 1;
    SolumRegularene = "solum_regularene", 1;
    SolumLegibilene = "solum_legibilene", 1;
    SolumVinculumne = "solum_vinculumne", 1;
    SolumMensura = "solum_mensura", 1;
    SolumModus = "solum_modus", 1;
    SolumStatus = "solum_status", 1;
    SolumSequere = "solum_sequere", 1;
    SolumVincula = "solum_vincula", 2;
    SolumDele = "solum_dele", 1;
    SolumExscribe = "solum_exscribe", 2;
    SolumRenomina = "solum_renomina", 2;
    SolumTange = "solum_tange", 1;
    SolumModum = "solum_modum", 2;
    SolumCrea = "solum_crea", 1;
    SolumEnumera = "solum_enumera", 1;
    SolumAmputa = "solum_amputa", 1;
    SolumAbsolve = "solum_absolve", 1;
    SolumDomus = "solum_domus", 0;
    SolumTemporarium = "solum_temporarium", 0;
    ViaIunge = "via_iunge", 1;
    ViaParens = "via_parens", 1;
    ViaNomen = "via_nomen", 1;
    ViaSuffixum = "via_suffixum", 1;
    ConsolumHauri = "consolum_hauri", 1;
    ConsolumFunde = "consolum_funde", 1;
    ConsolumDic = "consolum_dic", 1;
    ConsolumMone = "consolum_mone", 1;
    ConsolumTerminalis = "consolum_terminalis", 1;
    ProcessusAmbitus = "processus_ambitus", 1;
    ProcessusSedes = "processus_sedes", 0;
    ProcessusIdentitas = "processus_identitas", 0;
    ProcessusExi = "processus_exi", 1;
    // a shell command's standard output (`processus.exsequi`; src/cli/hostshell.rs)
    ProcessusExsequi = "processus_exsequi", 1;
    // a program run without a shell: {status, stdout, stderr} (`processus.captura`)
    ProcessusCaptura = "processus_captura", 1;
    // norma:aleator (src/eval/host_random.rs)
    AleatorFractum = "aleator_fractum", 0;
    AleatorSortire = "aleator_sortire", 2;
    AleatorOctetos = "aleator_octetos", 1;
    AleatorSemina = "aleator_semina", 1;
    // norma:codex (src/eval/host_codex.rs): the decoders give nihil for bad input
    CodexHex = "codex_hex", 1;
    CodexDeHex = "codex_de_hex", 1;
    CodexBase64 = "codex_base64", 1;
    CodexDeBase64 = "codex_de_base64", 1;
    CodexUrl = "codex_url", 2;
    CodexDeUrl = "codex_de_url", 1;
    // norma:crypta: a SHA-2 digest (src/eval/sha2.rs)
    CryptaDigere = "crypta_digere", 2;
    // norma:toml: TOML text to a valor (RUN025 with line:column), or nihil
    TomlSolve = "toml_solve", 1;
    TomlTempta = "toml_tempta", 1;
    // norma:valor: the JSON kind of a valor ("nihil", "bivalens", "numerus", …)
    ValorGenus = "valor_genus", 1;
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
            | Host::JsonTempta
            | Host::TomlSolve
            | Host::TomlTempta
            | Host::CodexDeHex
            | Host::CodexDeBase64
            | Host::CodexDeUrl
            | Host::SolumCarpe
            | Host::SolumExstat
            | Host::SolumDirectoriumne
            | Host::SolumRegularene
            | Host::SolumLegibilene
            | Host::SolumVinculumne
            | Host::SolumMensura
            | Host::SolumModus
            | Host::SolumStatus
            | Host::SolumSequere
            | Host::SolumDele
            | Host::SolumTange
            | Host::SolumCrea
            | Host::SolumEnumera
            | Host::SolumAmputa
            | Host::SolumAbsolve
            | Host::ViaParens
            | Host::ViaNomen
            | Host::ViaSuffixum
            | Host::ConsolumDic
            | Host::ConsolumMone
            | Host::ProcessusAmbitus
            | Host::ProcessusExsequi => vec![Ty::Text],
            Host::SolumAppone | Host::SolumVincula | Host::SolumExscribe | Host::SolumRenomina => {
                vec![Ty::Text, Ty::Text]
            }
            Host::ScribeOctetos => vec![Ty::Text, Ty::Bytes],
            Host::SolumPartem => vec![Ty::Text, Ty::Int, Ty::Int],
            Host::SolumInveni => vec![Ty::Text, Ty::Text, Ty::Int, Ty::Int],
            Host::SolumModum => vec![Ty::Text, Ty::Int],
            Host::ViaIunge | Host::ProcessusCaptura => vec![Ty::List(Box::new(Ty::Text))],
            Host::ConsolumHauri
            | Host::ConsolumTerminalis
            | Host::ProcessusExi
            | Host::AleatorOctetos
            | Host::AleatorSemina => vec![Ty::Int],
            Host::AleatorSortire => vec![Ty::Int, Ty::Int],
            Host::ConsolumFunde => vec![Ty::Bytes],
            Host::SolumDomus
            | Host::SolumTemporarium
            | Host::ProcessusSedes
            | Host::ProcessusIdentitas
            | Host::AleatorFractum => vec![],
            Host::JsonPange => vec![Ty::Json { doc: true }],
            Host::ValorGenus => vec![Ty::Json { doc: false }],
            Host::CodexHex | Host::CodexBase64 => vec![Ty::Bytes],
            Host::CodexUrl => vec![Ty::Text, Ty::Bool],
            Host::CryptaDigere => vec![Ty::Text, Ty::Bytes],
            Host::ScribeTextum | Host::LegeTensorem => vec![Ty::Text, Ty::Text],
            Host::LegeCsv => vec![Ty::Text, Ty::Text, Ty::Bool, Ty::List(Box::new(Ty::Text))],
            Host::Hora | Host::Argumenta | Host::Directorium | Host::LegeLineam => vec![],
            Host::ArgumentaParsa => vec![Ty::Int, Ty::Text],
            Host::ImperiumElige => vec![Ty::Text],
            Host::ImperiumArgumenta => vec![Ty::Int, Ty::Text, Ty::Int],
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
            Host::JsonSolve => Ty::Json { doc: true },
            Host::TomlSolve => Ty::Json { doc: false },
            Host::TomlTempta => Ty::Union(vec![Ty::Json { doc: false }, Ty::Nihil]),
            Host::CodexHex | Host::CodexBase64 | Host::CodexUrl | Host::ValorGenus => Ty::Text,
            Host::CodexDeHex | Host::CodexDeBase64 => Ty::Union(vec![Ty::Bytes, Ty::Nihil]),
            Host::CodexDeUrl => Ty::Union(vec![Ty::Text, Ty::Nihil]),
            Host::CryptaDigere => Ty::Bytes,
            Host::ProcessusCaptura => Ty::Json { doc: false },
            Host::SolumSequere
            | Host::SolumAbsolve
            | Host::SolumDomus
            | Host::SolumTemporarium
            | Host::ViaIunge
            | Host::ViaParens
            | Host::ViaNomen
            | Host::ViaSuffixum
            | Host::ProcessusSedes
            | Host::ProcessusExsequi => Ty::Text,
            Host::SolumPartem | Host::ConsolumHauri => Ty::Bytes,
            Host::SolumInveni
            | Host::SolumMensura
            | Host::SolumModus
            | Host::ProcessusIdentitas => Ty::Int,
            Host::SolumExstat
            | Host::SolumDirectoriumne
            | Host::SolumRegularene
            | Host::SolumLegibilene
            | Host::SolumVinculumne
            | Host::ConsolumTerminalis => Ty::Bool,
            Host::SolumCarpe | Host::SolumEnumera => Ty::List(Box::new(Ty::Text)),
            Host::SolumStatus => Ty::List(Box::new(Ty::Int)),
            Host::ProcessusAmbitus => Ty::Union(vec![Ty::Text, Ty::Nihil]),
            Host::ScribeOctetos
            | Host::SolumAppone
            | Host::SolumVincula
            | Host::SolumDele
            | Host::SolumExscribe
            | Host::SolumRenomina
            | Host::SolumTange
            | Host::SolumModum
            | Host::SolumCrea
            | Host::SolumAmputa
            | Host::ConsolumFunde
            | Host::ConsolumDic
            | Host::ConsolumMone
            | Host::ProcessusExi
            | Host::AleatorSemina => Ty::Vacuum,
            Host::AleatorFractum => Ty::Float,
            Host::AleatorSortire => Ty::Int,
            Host::AleatorOctetos => Ty::Bytes,
            Host::JsonTempta => Ty::Union(vec![Ty::Json { doc: true }, Ty::Nihil]),
            Host::LegeOctetos | Host::TensoresAdOctetos => Ty::Bytes,
            Host::TensoresExOctetis => args.get(1).cloned().unwrap_or(Ty::Any),
            Host::ScribeTextum
            | Host::Progressus
            | Host::ProgressusFinis
            | Host::ServaTensores
            | Host::ParaDirectorium => Ty::Vacuum,
            Host::LegeCsv | Host::LegeTensorem => tensor(),
            Host::Hora => Ty::Float,
            Host::ArgumentaParsa | Host::ImperiumArgumenta => Ty::Any,
            Host::ImperiumElige => Ty::Int,
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
        wide: false,
    }
}
