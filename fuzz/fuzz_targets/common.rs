//! Shared by the `check` and `run` targets: turning fuzz bytes into an in-memory
//! program (several modules), a loader with the bundled libraries, a sandboxed `Io`,
//! and the worker thread the CLI also uses.

#![allow(dead_code)]

use faber::diag::Diagnostic;
use faber::resolve::{canonical_name, LoadError, Loader, MemoryLoader};
use faber::source::SourceMap;

/// The entry module's name.
pub const ENTRY: &str = "main.fab";

/// A line `%%% name.fab` starts another in-memory module, so the fuzzer can build
/// multi-file programs (imports, cycles, escapes). Text before the first such line
/// is `main.fab`.
pub const FILE_MARKER: &str = "%%% ";

/// Splits the input into `(name, text)` modules; the entry comes first.
pub fn split_modules(text: &str) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = vec![(ENTRY.to_string(), String::new())];
    for line in text.split_inclusive('\n') {
        if let Some(name) = line.strip_prefix(FILE_MARKER) {
            let name = name.trim();
            if !name.is_empty() && name != ENTRY {
                files.push((name.to_string(), String::new()));
                continue;
            }
        }
        files.last_mut().unwrap().1.push_str(line);
    }
    files
}

/// In-memory modules first (`MemoryLoader`), then the libraries bundled in faber
/// (`norma:`, `gradus:`), as the CLI's loader does. Nothing touches the disk.
pub struct FuzzLoader {
    pub memory: MemoryLoader,
}

impl FuzzLoader {
    pub fn new(modules: &[(String, String)]) -> FuzzLoader {
        FuzzLoader {
            memory: MemoryLoader {
                files: modules[1..].iter().cloned().collect(),
            },
        }
    }
}

impl Loader for FuzzLoader {
    fn load(&mut self, spec: &str, importer: &str) -> Result<(String, String), LoadError> {
        match self.memory.load(spec, importer) {
            Err(LoadError::NotFound(why)) => {
                let name = canonical_name(spec, importer)?;
                match faber::libraries::bundled(&name) {
                    Some(text) => Ok((name, text.to_string())),
                    None => Err(LoadError::NotFound(why)),
                }
            }
            other => other,
        }
    }
}

/// Bytes → text as the CLI reads a file: invalid UTF-8 becomes U+FFFD (the CLI also
/// reports LEX014, which is irrelevant for the later stages).
pub fn text_of(data: &[u8]) -> String {
    String::from_utf8_lossy(data).into_owned()
}

/// Compiles the fuzz input (all stages up to and including autodiff), renders any
/// diagnostics like the CLI would, and checks their spans.
pub fn compile(data: &[u8]) -> (SourceMap, Result<faber::ir::Program, Vec<Diagnostic>>) {
    let text = text_of(data);
    let modules = split_modules(&text);
    let mut sources = SourceMap::new();
    let entry = sources.add(ENTRY, modules[0].1.clone());
    let mut loader = FuzzLoader::new(&modules);
    let result = faber::compile(&mut sources, entry, &mut loader);
    if let Err(diags) = &result {
        check_diagnostics(&sources, diags);
    }
    (sources, result)
}

/// Every span lies inside its file, and rendering (what the CLI prints) works.
pub fn check_diagnostics(sources: &SourceMap, diags: &[Diagnostic]) {
    let files = sources.files().count();
    for d in diags {
        let spans = std::iter::once(d.span).chain(d.labels.iter().map(|l| l.span));
        for span in spans {
            assert!(
                (span.file.0 as usize) < files,
                "{}: span in unknown file",
                d.code.id
            );
            let len = sources.text(span.file).len();
            assert!(
                span.lo <= span.hi && span.hi as usize <= len,
                "{}: span {}..{} outside a file of {len} bytes",
                d.code.id,
                span.lo,
                span.hi
            );
        }
    }
    let _ = faber::diag::render(diags, sources, false);
}

/// Stack of the worker thread, as in `src/main.rs`: only touched pages are committed.
pub const WORKER_STACK: usize = 256 * 1024 * 1024;

type Job = Box<dyn FnOnce() + Send>;

/// The worker: one thread with the CLI's stack, started on the first input and reused
/// for every later one. A fresh thread per input (mmap of a 256 MiB stack, ASan's
/// thread set-up, the stack's pages faulted in again) cost more than a small input's
/// whole compilation. Jobs go one at a time through `jobs`; `done` says one finished.
struct Worker {
    jobs: std::sync::mpsc::SyncSender<Job>,
    done: std::sync::mpsc::Receiver<()>,
}

fn worker() -> &'static std::sync::Mutex<Worker> {
    static WORKER: std::sync::OnceLock<std::sync::Mutex<Worker>> = std::sync::OnceLock::new();
    WORKER.get_or_init(|| {
        let (jobs, inbox) = std::sync::mpsc::sync_channel::<Job>(0);
        let (finished, done) = std::sync::mpsc::sync_channel::<()>(0);
        std::thread::Builder::new()
            .name("fuzz-worker".into())
            .stack_size(WORKER_STACK)
            .spawn(move || {
                for job in inbox {
                    job();
                    if finished.send(()).is_err() {
                        break;
                    }
                }
            })
            .expect("spawn the worker");
        std::sync::Mutex::new(Worker { jobs, done })
    })
}

/// Runs `f` on the worker thread (the CLI's stack size) and waits for it. A panic
/// there is a crash as on the main thread: libfuzzer-sys's panic hook aborts the
/// process before unwinding, whichever thread panics. Per-thread settings
/// (`fuzz_config`, the step budget) are set again by every job, so no input sees
/// another's; the tensor kernels' per-thread scratch buffers are caches that do not
/// change results.
pub fn on_worker<F: FnOnce() + Send + 'static>(f: F) {
    let w = worker().lock().unwrap_or_else(|e| e.into_inner());
    w.jobs.send(Box::new(f)).expect("the worker is alive");
    w.done.recv().expect("the worker finished the job");
}

/// Limits for fuzzing: one kernel thread, tensors of at most 2^16 elements, texts of
/// at most 1 MiB and lists of at most 2^16 items (so an allocation stays far below
/// libFuzzer's 2 GB malloc limit).
pub fn fuzz_config() -> faber::eval::RunConfig {
    faber::eval::RunConfig {
        max_text_bytes: 1 << 20,
        max_list_items: 1 << 16,
        tensor: faber::tensor::Limits {
            max_elements: 1 << 16,
        },
        threads: 1,
        ..faber::eval::RunConfig::default()
    }
}

/// [`fuzz_config`]'s limits in force on this thread while the guard lives (for the
/// tensor constant folding of `check`, which runs no program).
pub fn fuzz_limits() -> faber::eval::Installed {
    fuzz_config().install()
}

/// Real files are never read or written; output is counted, not kept.
#[derive(Default)]
pub struct SandboxIo {
    pub bytes: usize,
}

impl faber::eval::Io for SandboxIo {
    fn stdout(&mut self, s: &str) {
        self.bytes += s.len();
    }
    fn stderr(&mut self, s: &str) {
        self.bytes += s.len();
    }
    fn read_file(&mut self, path: &str) -> Result<String, String> {
        Err(format!("{path}: no files while fuzzing"))
    }
    fn write_file(&mut self, path: &str, _contents: &str) -> Result<(), String> {
        Err(format!("{path}: no files while fuzzing"))
    }
    fn read_bytes(&mut self, path: &str) -> Result<Vec<u8>, String> {
        Err(format!("{path}: no files while fuzzing"))
    }
    fn write_bytes(&mut self, path: &str, _contents: &[u8]) -> Result<(), String> {
        Err(format!("{path}: no files while fuzzing"))
    }
    fn claim_dir(&mut self, path: &str) -> Result<(), String> {
        Err(format!("{path}: no files while fuzzing"))
    }
}
