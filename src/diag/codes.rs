//! The catalogue of diagnostic codes. A code never changes meaning once published;
//! retired codes stay here, marked. Families: LEX (lexing), PARSE (grammar),
//! SEM (resolution and checking), RUN (runtime), CLI (command line, packages).

/// A stable diagnostic code with a one-line summary (used by `faber explain`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Code {
    pub id: &'static str,
    pub summary: &'static str,
}

macro_rules! codes {
    ($($name:ident = $id:literal, $summary:literal;)*) => {
        $(pub const $name: Code = Code { id: $id, summary: $summary };)*
        /// Every code, in catalogue order.
        pub const ALL: &[Code] = &[$($name),*];
    };
}

codes! {
    // ---- lexing ----
    LEX_UNKNOWN_CHAR = "LEX001", "a character that starts no token";
    LEX_UNTERMINATED_TEXT = "LEX002", "a text literal without its closing quote on the same line";
    LEX_BAD_ESCAPE = "LEX003", "an unknown escape sequence in a text literal";
    LEX_TRAILING_COMMENT = "LEX004", "a `#` comment after code on the same line";
    LEX_BAD_NUMBER = "LEX005", "a malformed or out-of-range number literal";
    LEX_ASCII_OPERATOR = "LEX006", "an ASCII spelling of an operator that Faber writes as a glyph";
    LEX_UNSUPPORTED_GLYPH = "LEX007", "a glyph outside the supported subset";
    LEX_BAD_FRONTMATTER = "LEX008", "frontmatter that is not valid TOML or is not closed";
    LEX_UNSUPPORTED_LOCALE = "LEX009", "a frontmatter locale that is not a reader locale";
    LEX_BAD_BYTES = "LEX010", "a malformed `|…|` byte literal";
    LEX_BAD_ANNOTATION = "LEX011", "a malformed annotation line";
    LEX_UNICODE_SPACE = "LEX012", "a non-ASCII space character outside a literal";
    LEX_TOO_DEEP = "LEX013", "brackets or operators nested beyond the supported depth";
    LEX_BAD_UTF8 = "LEX014", "a source file that is not valid UTF-8";
    // ---- parsing ----
    PARSE_UNEXPECTED = "PARSE001", "a token the grammar does not allow here";
    PARSE_UNEXPECTED_EOF = "PARSE002", "the file ends inside a construct";
    // Not reported by faber (its `faber explain` entry says what is reported instead).
    PARSE_EXTRA_TOKEN = "PARSE003", "input continues after a complete construct";
    PARSE_RETIRED_KEYWORD = "PARSE004", "a retired spelling (e.g. `aliter`)";
    PARSE_UNSUPPORTED = "PARSE005", "a construct outside the supported subset";
    PARSE_BAD_STATEMENT_START = "PARSE006", "a statement that starts with a token no statement may start with";
    // Not reported by faber (its `faber explain` entry says what is reported instead).
    PARSE_BAD_ASSIGN_TARGET = "PARSE007", "the left side of `←` is not a place";
    // Not reported by faber (its `faber explain` entry says what is reported instead).
    PARSE_BAD_TEMPLATE = "PARSE008", "a template call whose holes do not match its arguments";
    // ---- resolution and checking ----
    SEM_UNKNOWN_NAME = "SEM001", "a name that is not bound in scope";
    SEM_UNKNOWN_FUNCTION = "SEM002", "a call to a function or method that does not exist";
    SEM_ARITY = "SEM003", "a call with the wrong number of arguments";
    SEM_TYPE_MISMATCH = "SEM004", "a value whose static type does not fit where it is used";
    SEM_FIXUM_ASSIGN = "SEM005", "assignment to a `fixum` binding after its initialisation";
    SEM_DUPLICATE = "SEM006", "a name declared twice in the same scope";
    SEM_UNKNOWN_FIELD = "SEM007", "a field that the genus does not declare";
    SEM_UNCAUGHT_THROW = "SEM008", "`iace` or a call to a `⇥` function outside `fac` in a function without `⇥`";
    SEM_IMPORT_NOT_FOUND = "SEM009", "an import whose file does not exist";
    SEM_IMPORT_CYCLE = "SEM010", "modules that import each other in a cycle";
    SEM_IMPORT_ESCAPE = "SEM011", "an import path that leaves its library or package root";
    SEM_TOP_LEVEL_STATEMENT = "SEM012", "a statement at top level that is not a declaration";
    SEM_NO_ENTRY = "SEM013", "`run` on a file without `incipit`";
    SEM_UNSUPPORTED = "SEM014", "a construct outside the supported subset";
    SEM_UNKNOWN_TYPE = "SEM015", "a type name that is not defined";
    SEM_TEMPLATE_ARITY = "SEM016", "a template whose holes do not match its arguments";
    SEM_LOOP_CONTROL = "SEM017", "`rumpe` or `perge` outside a loop";
    SEM_RETURN = "SEM018", "a `redde` that does not fit the function's result type";
    SEM_BAD_TARGET = "SEM019", "an assignment target that is not a place";
    SEM_MISSING_FIELD = "SEM020", "a record literal without a required field";
    SEM_BAD_ANNOTATION = "SEM021", "an annotation that is malformed or misplaced";
    SEM_UNINITIALISED = "SEM022", "a deferred binding read before it is assigned";
    SEM_SHAPE = "SEM023", "tensor shapes known at compile time that do not fit the operation";
    SEM_NOT_DIFFERENTIABLE = "SEM024", "a construct under `@ radix backward` that cannot be differentiated";
    SEM_MISSING_RETURN = "SEM025", "a function with a result type whose body can reach its end without `redde`";
    SEM_SIZE_CONFLICT = "SEM026", "a call that binds one size parameter (`magnitudo N`) to two different extents";
    SEM_SPONTE_ORDER = "SEM027", "a required parameter after a `sponte` (optional) one";
    SEM_TYPE_ARGS = "SEM028", "type arguments that do not fit a generic genus's type parameters";
    SEM_NO_CONVERSION = "SEM029", "a `↦` conversion between two types that have no conversion";
    // ---- runtime ----
    RUN_INDEX = "RUN001", "an index outside a list, text or tensor";
    RUN_MISSING_KEY = "RUN002", "a map key that is not present";
    RUN_DIV_ZERO = "RUN003", "integer division or remainder by zero";
    RUN_OVERFLOW = "RUN004", "integer arithmetic that overflows 64 bits";
    RUN_CONVERSION = "RUN005", "a `↦` conversion that failed and was not caught";
    RUN_UNCAUGHT = "RUN006", "an `iace` that no `fac … cape` caught";
    RUN_MORI = "RUN007", "the program called `mori`";
    RUN_ASSERT = "RUN008", "an `adfirma` whose condition was false";
    RUN_RECURSION = "RUN009", "calls nested deeper than the recursion limit";
    RUN_TYPE = "RUN010", "an operation applied to values of the wrong kind";
    RUN_ZERO_STEP = "RUN011", "a range with step zero";
    RUN_LIMIT = "RUN012", "a value that grew beyond a resource limit";
    RUN_SHAPE = "RUN013", "tensor shapes that do not fit the operation";
    RUN_STEP_BUDGET = "RUN014", "the program ran more steps than `--max-steps` allows";
    // Not reported by faber (its `faber explain` entry says what is reported instead).
    RUN_ROUTE = "RUN015", "an `ad` route that is not available";
    RUN_DOMAIN = "RUN016", "a tensor value outside an operation's domain (log of 0, division by 0, …)";
    RUN_HOST = "RUN017", "a host function failed (a file that cannot be read or written, …)";
    RUN_NON_FINITE = "RUN018", "an operation produced NaN or an infinity under `faber run --check-finite`";
    RUN_INTERRUPTED = "RUN019", "the run was interrupted (SIGINT, Ctrl-C)";
    RUN_DATA = "RUN020", "a data file whose contents do not fit (a ragged CSV row, a field that is not a number, …)";
    RUN_CHECKPOINT_MISFIT = "RUN021", "a training checkpoint of another model or optimizer (a name missing or extra, a shape that differs)";
    RUN_CHECKPOINT_FORMAT = "RUN022", "a file that is not a training checkpoint this faber reads (parameters only, an older layout version)";
    RUN_NIHIL_ACCESS = "RUN023", "a non-null access (`!.`, `![`, `!(`) on a value that is `nihil`";
    RUN_ARGUMENTS = "RUN024", "command-line arguments that do not fit the program's `@ optio` / `@ operandus` declarations";
    RUN_JSON = "RUN025", "a JSON or TOML text that does not parse (the message gives its line and column)";
    // ---- command line and packages ----
    CLI_IO = "CLI001", "a file or directory that cannot be read";
    CLI_MANIFEST = "CLI002", "a malformed `faber.toml`";
    CLI_UNKNOWN_CODE = "CLI003", "`faber explain` given a code that is not in the catalogue";
    CLI_UNTRANSLATABLE = "CLI004", "`faber format --locale` cannot translate a file into the target locale";
    CLI_FORMAT_UNSAFE = "CLI005", "`faber format` would change how a file reads, so it leaves the file as it is";
    CLI_NO_PLUGIN = "CLI006", "no PJRT plugin was found (`--xla-plugin`, `FABER_PJRT_PLUGIN`, a Python environment)";
    CLI_NOT_A_PLUGIN = "CLI007", "a file that is not a PJRT plugin (not a shared library, or without `GetPjrtApi`)";
    CLI_PLUGIN_VERSION = "CLI008", "a PJRT plugin of a C API major version this faber does not support";
    CLI_PLUGIN_FAILED = "CLI009", "a PJRT plugin call failed (initialisation, client creation, listing devices)";
    CLI_XLA_COMPILE = "CLI010", "a program could not be compiled for a PJRT device (an op without a StableHLO lowering, or the plugin's compiler refused it)";
    CLI_XLA_EXECUTE = "CLI011", "running a compiled program on a PJRT device failed (a transfer, the execution, or a result that differs from the native one)";
    CLI_XLA_OUT_OF_MEMORY = "CLI012", "a PJRT device ran out of memory (a transfer or an execution the plugin refused with `RESOURCE_EXHAUSTED`)";
    CLI_XLA_NO_DEVICE = "CLI013", "`--device N` (or `[run] device`) names a device the PJRT plugin does not have";
    CLI_SPMD_DEVICES = "CLI014", "`--devices N` asks for more devices than the PJRT plugin offers";
    CLI_SPMD_BATCH = "CLI015", "the batch of a data-parallel train step does not split evenly over the devices";
    CLI_MULTIHOST_JOIN = "CLI016", "the processes of a multi-process run did not all meet (a peer that never joined, a coordinator that never answered or could not listen)";
    CLI_MULTIHOST_UNSUPPORTED = "CLI017", "the PJRT plugin cannot run one program over several processes (its client shows only this process's devices)";
    CLI_SHARDING = "CLI018", "a `[run.sharding]` entry of `faber.toml` that does not fit the train step's parameters (an axis the device count does not divide, a rank-0 leaf, a key that names none)";
}

/// Looks a code up by its id (`"LEX001"`).
pub fn lookup(id: &str) -> Option<Code> {
    ALL.iter().copied().find(|c| c.id.eq_ignore_ascii_case(id))
}
