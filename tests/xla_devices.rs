//! `faber devices` (issue 24, docs/xla.md): loading a PJRT plugin and listing its
//! devices. The error paths always run: no plugin (CLI006, naming the setup command),
//! a file that is not a shared library and a shared library without `GetPjrtApi`
//! (CLI007), a plugin of another API major version (CLI008) and a plugin whose call
//! fails (CLI009). The last three use tiny libraries compiled here with `cc` (the C
//! compiler cargo already links with), so each fails for exactly the stated reason.
//! The success path runs when a real plugin is at hand (`FABER_PJRT_PLUGIN`, or
//! `.venv-xla/` from scripts/xla-setup.sh) and prints
//! `skipped: no PJRT plugin (run scripts/xla-setup.sh)` when not.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::entries::first_error_code;
use common::{pjrt_plugin, say_no_plugin, Faber};

/// A fresh scratch directory. Under the system temp dir, not the target dir: the
/// target dir may lie inside the repository, where `.venv-xla/` would be found.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("faber-xla-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn devices(dir: &Path, args: &[&str]) -> Faber {
    Faber::new().arg("devices").args(args).current_dir(dir)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Exit 1, `code` first, no panic; returns stderr.
fn expect_error(o: &Output, code: &str) -> String {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(first_error_code(&err), Some(code), "{err}");
    assert!(
        !err.contains("panicked") && !err.contains("please report"),
        "{err}"
    );
    assert!(o.stdout.is_empty(), "{}", stdout(o));
    err
}

/// Compiles `source` into the shared library `dir/name.so` with `cc`.
fn shared_library(dir: &Path, name: &str, source: &str, defines: &[&str]) -> PathBuf {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, source).unwrap();
    let so = dir.join(format!("{name}.so"));
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&so)
        .args(defines)
        .arg(&c)
        .status()
        .expect("cc (the C compiler cargo links with) runs");
    assert!(status.success(), "cc failed on {}", c.display());
    so
}

/// A fake PJRT plugin: its `GetPjrtApi` returns a table laid out like `PJRT_Api`
/// (struct_size, extension_start, PJRT_Api_Version, then function pointers) with
/// version MAJOR.MINOR and size SIZE, whose `PJRT_Plugin_Initialize` fails with a
/// message (`PJRT_Error_Message`) and whose other entries are null.
const FAKE_PLUGIN: &str = r#"
#include <stddef.h>
#include <string.h>
typedef struct { size_t struct_size; void *ext; const void *error;
                 const char *message; size_t message_size; } MessageArgs;
static const char MESSAGE[] = "fake plugin: initialisation refused";
static int the_error;
static int destroyed;
static void error_destroy(void *args) { (void)args; destroyed++; }
static void error_message(MessageArgs *a) { a->message = MESSAGE; a->message_size = strlen(MESSAGE); }
static void *initialize(void *args) { (void)args; return &the_error; }
struct api { size_t struct_size; void *ext; size_t version_size; void *version_ext;
             int major; int minor; void *fns[80]; };
static struct api API = { SIZE, 0, 24, 0, MAJOR, MINOR,
                          { (void *)error_destroy, (void *)error_message, 0, (void *)initialize } };
const struct api *GetPjrtApi(void) { return &API; }
"#;

/// A fake PJRT plugin with one device that lists it and then fails at compiling
/// (`-DFAIL_COMPILE`) or at copying an argument to the device (otherwise, with the
/// message `TRANSFER_MESSAGE`). Entries
/// sit at their `PJRT_Api` slots (`fns[i]` is the field at byte 40 + 8·i) and write
/// their outputs at the args structs' offsets, both pinned in src/xla/pjrt_api.rs.
const WORKING_FAKE_PLUGIN: &str = r#"
#include <stddef.h>
#include <string.h>
typedef struct { size_t struct_size; void *ext; const void *error;
                 const char *message; size_t message_size; } MessageArgs;
static const char *msg = "";
static int the_error, client, device, desc, exe, exe2;
static void error_destroy(void *a) { (void)a; }
static void error_message(MessageArgs *a) { a->message = msg; a->message_size = strlen(msg); }
static void *fail(const char *m) { msg = m; return &the_error; }
static void *ok(char *a) { (void)a; return 0; }
static void *client_create(char *a) { *(void **)(a + 64) = &client; return 0; }
static void *text(char *a) { *(const char **)(a + 24) = "fake"; *(size_t *)(a + 32) = 4; return 0; }
static void *devices(char *a) { static void *list[1] = { &device };
  *(void ***)(a + 24) = list; *(size_t *)(a + 32) = 1; return 0; }
static void *get_description(char *a) { *(void **)(a + 24) = &desc; return 0; }
static void *description_id(char *a) { *(int *)(a + 24) = 0; return 0; }
static void *compile(char *a) {
#ifdef FAIL_COMPILE
  (void)a; return fail("fake plugin: compilation refused");
#else
  *(void **)(a + 48) = &exe; return 0;
#endif
}
static void *get_executable(char *a) { *(void **)(a + 24) = &exe2; return 0; }
static void *num_outputs(char *a) { *(size_t *)(a + 24) = 1; return 0; }
#ifndef TRANSFER_MESSAGE
#define TRANSFER_MESSAGE "fake plugin: out of device memory"
#endif
static void *to_device(char *a) { (void)a; return fail(TRANSFER_MESSAGE); }
struct api { size_t struct_size; void *ext; size_t version_size; void *version_ext;
             int major; int minor; void *fns[80]; };
static struct api API = { sizeof(struct api), 0, 24, 0, 0, 81, {
  [0] = (void *)error_destroy, [1] = (void *)error_message, [3] = (void *)ok,
  [10] = (void *)client_create, [11] = (void *)ok, [12] = (void *)text, [14] = (void *)text,
  [15] = (void *)devices, [16] = (void *)devices, [20] = (void *)compile,
  [22] = (void *)to_device, [23] = (void *)description_id, [26] = (void *)text,
  [28] = (void *)text, [29] = (void *)get_description, [40] = (void *)ok,
  [44] = (void *)num_outputs, [50] = (void *)ok, [51] = (void *)get_executable } };
const struct api *GetPjrtApi(void) { return &API; }
"#;

fn fake_plugin(dir: &Path, name: &str, major: i32, minor: i32, size: &str) -> PathBuf {
    shared_library(
        dir,
        name,
        FAKE_PLUGIN,
        &[
            &format!("-DMAJOR={major}"),
            &format!("-DMINOR={minor}"),
            &format!("-DSIZE={size}"),
        ],
    )
}

#[test]
fn no_plugin_anywhere_is_cli006_naming_the_setup_command() {
    let dir = scratch("none");
    let err = expect_error(&devices(&dir, &[]).output(), "CLI006");
    assert!(err.contains("no PJRT plugin found"), "{err}");
    assert!(err.contains("scripts/xla-setup.sh"), "{err}");
    assert!(err.contains("FABER_PJRT_PLUGIN"), "{err}");

    // An empty environment (a venv without the plugin) is no plugin either.
    let venv = dir.join("venv");
    std::fs::create_dir_all(venv.join("lib/python3.11/site-packages/xla_plugins")).unwrap();
    let out = devices(&dir, &[]).env("VIRTUAL_ENV", &venv).output();
    expect_error(&out, "CLI006");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_named_path_that_does_not_exist_is_cli006_saying_where_it_came_from() {
    let dir = scratch("missing");
    let err = expect_error(
        &devices(&dir, &["--xla-plugin", "nowhere/xla.so"]).output(),
        "CLI006",
    );
    assert!(
        err.contains("`nowhere/xla.so` (from `--xla-plugin`)"),
        "{err}"
    );
    assert!(err.contains("scripts/xla-setup.sh"), "{err}");
    let out = devices(&dir, &[])
        .env("FABER_PJRT_PLUGIN", "/nonexistent/p.so")
        .output();
    let err = expect_error(&out, "CLI006");
    assert!(err.contains("(from `FABER_PJRT_PLUGIN`)"), "{err}");
    // The flag wins over the variable.
    let out = devices(&dir, &["--xla-plugin", "flag.so"])
        .env("FABER_PJRT_PLUGIN", "/nonexistent/p.so")
        .output();
    assert!(expect_error(&out, "CLI006").contains("`flag.so`"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_file_that_is_not_a_shared_library_is_cli007_with_the_loaders_reason() {
    let dir = scratch("text");
    std::fs::write(dir.join("fake.so"), "not a shared library\n").unwrap();
    let err = expect_error(
        &devices(&dir, &["--xla-plugin", "fake.so"]).output(),
        "CLI007",
    );
    assert!(err.contains("cannot load `fake.so`"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A shared library built here that exports one function and no `GetPjrtApi`: the
/// dynamic loader accepts it (it is a real library for this machine, so the error
/// cannot be the loader's), and we know exactly what it exports, so CLI007 here can
/// only come from the missing entry point. (A system library such as libm would do
/// the same, but its path differs between systems.)
#[test]
fn a_shared_library_without_get_pjrt_api_is_cli007() {
    let dir = scratch("nosym");
    let so = shared_library(&dir, "plain", "int faber_plain(void) { return 7; }\n", &[]);
    let err = expect_error(
        &devices(&dir, &["--xla-plugin", so.to_str().unwrap()]).output(),
        "CLI007",
    );
    assert!(err.contains("does not export `GetPjrtApi`"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_plugin_of_another_major_version_is_cli008_before_any_call() {
    let dir = scratch("major");
    let so = fake_plugin(&dir, "v99", 99, 3, "sizeof(struct api)");
    let err = expect_error(
        &devices(&dir, &["--xla-plugin", so.to_str().unwrap()]).output(),
        "CLI008",
    );
    assert!(err.contains("implements PJRT C API 99.3"), "{err}");
    // Refused before PJRT_Plugin_Initialize, whose failure would be CLI009.
    assert!(!err.contains("initialisation refused"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_plugin_whose_api_table_is_too_small_is_cli007() {
    let dir = scratch("small");
    let so = fake_plugin(&dir, "small", 0, 1, "100");
    let err = expect_error(
        &devices(&dir, &["--xla-plugin", so.to_str().unwrap()]).output(),
        "CLI007",
    );
    assert!(err.contains("PJRT_Api is 100 bytes"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failing_plugin_call_is_cli009_with_the_plugins_message() {
    let dir = scratch("init");
    let so = fake_plugin(&dir, "init", 0, 81, "sizeof(struct api)");
    let err = expect_error(
        &devices(&dir, &["--xla-plugin", so.to_str().unwrap()]).output(),
        "CLI009",
    );
    assert!(
        err.contains("PJRT_Plugin_Initialize failed: fake plugin: initialisation refused"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_fake_plugin_lists_its_device_and_check_reports_compile_and_run_failures() {
    let dir = scratch("check");
    let so = shared_library(&dir, "compiles", WORKING_FAKE_PLUGIN, &[]);
    let path = so.to_str().unwrap();
    // Without --check the fake plugin is a working one.
    let out = devices(&dir, &["--xla-plugin", path]).output();
    assert!(check_listing(&out).contains("  0  fake  fake\n"));
    // This fake has no `PJRT_Error_GetCode`: its message says out of memory, CLI012.
    let err = expect_error(
        &devices(&dir, &["--xla-plugin", path, "--check"]).output(),
        "CLI012",
    );
    assert!(
        err.contains("PJRT_Client_BufferFromHostBuffer failed: fake plugin: out of device memory"),
        "{err}"
    );
    let so = shared_library(
        &dir,
        "no_transfer",
        WORKING_FAKE_PLUGIN,
        &["-DTRANSFER_MESSAGE=\"fake plugin: transfer refused\""],
    );
    let err = expect_error(
        &devices(&dir, &["--xla-plugin", so.to_str().unwrap(), "--check"]).output(),
        "CLI011",
    );
    assert!(
        err.contains("PJRT_Client_BufferFromHostBuffer failed: fake plugin: transfer refused"),
        "{err}"
    );
    let so = shared_library(&dir, "refuses", WORKING_FAKE_PLUGIN, &["-DFAIL_COMPILE"]);
    let err = expect_error(
        &devices(&dir, &["--xla-plugin", so.to_str().unwrap(), "--check"]).output(),
        "CLI010",
    );
    assert!(
        err.contains("PJRT_Client_Compile failed: fake plugin: compilation refused"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The device lines of a `faber devices` listing, checked for shape.
fn check_listing(out: &Output) -> String {
    let text = stdout(out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(out));
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("plugin: "), "{text}");
    assert!(lines[1].starts_with("PJRT C API: 0."), "{text}");
    assert!(lines[2].starts_with("platform: "), "{text}");
    let n: usize = lines[3]
        .strip_prefix("devices: ")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert!(n >= 1, "{text}");
    assert_eq!(lines.len(), 4 + n, "{text}");
    for line in &lines[4..] {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert!(words.len() >= 3, "{line}");
        words[0].parse::<i32>().expect("a device id");
    }
    text
}

#[test]
fn a_real_plugin_lists_its_devices() {
    let Some(plugin) = pjrt_plugin() else {
        say_no_plugin("xla_devices::a_real_plugin_lists_its_devices");
        return;
    };
    let dir = scratch("real");
    let out = devices(&dir, &["--xla-plugin", plugin.to_str().unwrap()]).output();
    let text = check_listing(&out);
    println!("faber devices:\n{text}");
    // --check compiles and runs on every device listed.
    let out = devices(&dir, &["--xla-plugin", plugin.to_str().unwrap(), "--check"]).output();
    let checked = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{checked}{}", stderr(&out));
    let n = text.lines().count() - 4;
    assert!(checked.starts_with(&text), "{checked}");
    let lines: Vec<&str> = checked.lines().skip(4 + n).collect();
    let want: Vec<String> = (0..n)
        .map(|i| format!("check: device {i}: compiled and ran `addita`: ok"))
        .collect();
    assert_eq!(lines, want, "{checked}");
    // The same plugin through the environment variable.
    let out = devices(&dir, &[])
        .env("FABER_PJRT_PLUGIN", &plugin)
        .output();
    assert_eq!(check_listing(&out), text);
    // And found by the search, when it lies in an environment's xla_plugins/.
    let env = plugin.ancestors().nth(5).unwrap();
    if env.join("lib").is_dir() && plugin.to_string_lossy().contains("/xla_plugins/") {
        let out = devices(&dir, &[]).env("VIRTUAL_ENV", env).output();
        assert_eq!(check_listing(&out), text);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A fake PJRT plugin with one device that runs programs: compiling gives an
/// executable of one output, a transfer gives a buffer, and each execution returns
/// the f32 scalar 7 — until `OK_RUNS` executions have succeeded; the next fails
/// with `FAIL_MESSAGE` and the `PJRT_Error_Code` `FAIL_CODE` (13, INTERNAL, unless
/// given; 8 is RESOURCE_EXHAUSTED). With `-DTO_HOST_OK=N`, copying a result to the
/// host fails that way after N copies instead. `-DNO_GET_CODE` leaves `PJRT_Error_GetCode` out
/// of the table, as an older plugin might. Slots and offsets as in
/// [`WORKING_FAKE_PLUGIN`], pinned in src/xla/pjrt_api.rs.
const RUNNING_FAKE_PLUGIN: &str = r#"
#include <stddef.h>
#include <string.h>
#ifndef FAIL_CODE
#define FAIL_CODE 13
#endif
typedef struct { size_t struct_size; void *ext; const void *error;
                 const char *message; size_t message_size; } MessageArgs;
static const char *msg = "";
static int code_now;
static int runs;
static int the_error, client, device, desc, exe, exe2, in_buf, out_buf;
static void error_destroy(void *a) { (void)a; }
static void error_message(MessageArgs *a) { a->message = msg; a->message_size = strlen(msg); }
static void *get_code(char *a) { *(int *)(a + 24) = code_now; return 0; }
static void *fail(const char *m, int code) { msg = m; code_now = code; return &the_error; }
static void *ok(char *a) { (void)a; return 0; }
static void *client_create(char *a) { *(void **)(a + 64) = &client; return 0; }
static void *text(char *a) { *(const char **)(a + 24) = "fake"; *(size_t *)(a + 32) = 4; return 0; }
static void *devices(char *a) { static void *list[1] = { &device };
  *(void ***)(a + 24) = list; *(size_t *)(a + 32) = 1; return 0; }
static void *get_description(char *a) { *(void **)(a + 24) = &desc; return 0; }
static void *description_id(char *a) { *(int *)(a + 24) = 0; return 0; }
static void *compile(char *a) { *(void **)(a + 48) = &exe; return 0; }
static void *get_executable(char *a) { *(void **)(a + 24) = &exe2; return 0; }
static void *num_outputs(char *a) { *(size_t *)(a + 24) = 1; return 0; }
static void *to_device(char *a) { *(void **)(a + 112) = &in_buf; return 0; }
static void *execute(char *a) {
  if (runs >= OK_RUNS) return fail(FAIL_MESSAGE, FAIL_CODE);
  runs++;
  void ***outputs = *(void ****)(a + 56);
  outputs[0][0] = &out_buf;
  return 0;
}
static void *element_type(char *a) { *(int *)(a + 24) = 11; return 0; }
static void *dimensions(char *a) { *(void **)(a + 24) = 0; *(size_t *)(a + 32) = 0; return 0; }
static int fetched;
static void *to_host(char *a) {
#ifdef TO_HOST_OK
  if (fetched >= TO_HOST_OK) return fail(FAIL_MESSAGE, FAIL_CODE);
#endif
  fetched++;
  **(float **)(a + 32) = 7.0f;
  return 0;
}
#ifdef NO_GET_CODE
#define GET_CODE 0
#else
#define GET_CODE (void *)get_code
#endif
struct api { size_t struct_size; void *ext; size_t version_size; void *version_ext;
             int major; int minor; void *fns[80]; };
static struct api API = { sizeof(struct api), 0, 24, 0, 0, 81, {
  [0] = (void *)error_destroy, [1] = (void *)error_message, [2] = GET_CODE, [3] = (void *)ok,
  [10] = (void *)client_create, [11] = (void *)ok, [12] = (void *)text, [14] = (void *)text,
  [15] = (void *)devices, [16] = (void *)devices, [20] = (void *)compile,
  [22] = (void *)to_device, [23] = (void *)description_id, [26] = (void *)text,
  [28] = (void *)text, [29] = (void *)get_description, [40] = (void *)ok,
  [44] = (void *)num_outputs, [50] = (void *)ok, [51] = (void *)get_executable,
  [55] = (void *)execute, [58] = (void *)ok, [59] = (void *)element_type,
  [60] = (void *)dimensions, [70] = (void *)to_host } };
const struct api *GetPjrtApi(void) { return &API; }
"#;

/// A program whose `damnum` runs on the device at each of `steps` steps, each step
/// writing a checkpoint (gradus:serialize, a safetensors file) of a tensor that
/// doubles per step and the loss.
fn checkpointing_program(steps: usize) -> String {
    format!(
        r#"importa ex "gradus:serialize" privata serialize

genus Status {{
    tf32[2] w
    f32 damnum
}}

functio damnum(tf32[2] x) → f32 {{
    redde x.summa()
}}

incipit {{
    fixum tf32[] semen ← vacua
    varia tf32[2] x ← semen.strue([1.0, 2.0], [2])
    itera ab 0 ‥ {steps} fixum i {{
        fixum f32 d ← damnum(x)
        nota d
        serialize.scribe_safetensors("ckpt.safetensors", Status {{ w = x, damnum = d }})
        x ← x.scala(2.0)
    }}
}}
"#
    )
}

/// `faber run --backend xla` of [`checkpointing_program`] in `dir` on `plugin`.
fn run_on(dir: &Path, plugin: &Path, steps: usize, extra: &[&str]) -> Output {
    let file = dir.join(format!("prog{steps}.fab"));
    std::fs::write(&file, checkpointing_program(steps)).unwrap();
    Faber::new()
        .args([
            "run",
            "--precision",
            "f32",
            "--backend",
            "xla",
            "--xla-plugin",
        ])
        .arg(plugin)
        .args(extra)
        .arg(&file)
        .current_dir(dir)
        .output()
}

/// Exit 1 with `code` first, no panic; returns stderr. (Unlike [`expect_error`],
/// the program may have printed before it stopped.)
fn expect_run_error(o: &Output, code: &str) -> String {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(first_error_code(&err), Some(code), "{err}");
    assert!(
        !err.contains("panicked") && !err.contains("please report"),
        "{err}"
    );
    err
}

/// No temporary file of the atomic writer (src/cli/atomic.rs) is left in `dir`.
fn no_temporaries(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        assert!(!name.contains(".faber-tmp-"), "left behind: {name}");
    }
}

#[test]
fn a_device_failure_mid_run_is_cli011_and_leaves_the_last_checkpoint_whole() {
    let dir = scratch("midrun");
    let lost = |ok_runs: u32| {
        shared_library(
            &dir,
            &format!("lost{ok_runs}"),
            RUNNING_FAKE_PLUGIN,
            &[
                &format!("-DOK_RUNS={ok_runs}"),
                "-DFAIL_MESSAGE=\"fake plugin: device lost\"",
            ],
        )
    };
    // The reference: two steps on a plugin that never fails write the checkpoint
    // of step 1.
    let reference = run_on(&dir, &lost(1000), 2, &[]);
    assert_eq!(reference.status.code(), Some(0), "{}", stderr(&reference));
    assert_eq!(stdout(&reference), "7.0\n7.0\n");
    let want = std::fs::read(dir.join("ckpt.safetensors")).unwrap();
    std::fs::remove_file(dir.join("ckpt.safetensors")).unwrap();

    // Three steps, the device lost at the third: exit 1, CLI011 naming the call, the
    // function and the plugin's message; the checkpoint is step 1's, whole.
    let o = run_on(&dir, &lost(2), 3, &[]);
    let err = expect_run_error(&o, "CLI011");
    assert!(
        err.contains("damnum` on the XLA device")
            && err.contains("PJRT_LoadedExecutable_Execute failed: fake plugin: device lost"),
        "{err}"
    );
    assert_eq!(stdout(&o), "7.0\n7.0\n");
    assert_eq!(std::fs::read(dir.join("ckpt.safetensors")).unwrap(), want);
    no_temporaries(&dir);

    // Lost at the first step: no checkpoint at all.
    std::fs::remove_file(dir.join("ckpt.safetensors")).unwrap();
    let o = run_on(&dir, &lost(0), 3, &[]);
    expect_run_error(&o, "CLI011");
    assert!(o.stdout.is_empty(), "{}", stdout(&o));
    assert!(!dir.join("ckpt.safetensors").exists());
    no_temporaries(&dir);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn out_of_device_memory_is_cli012_by_code_or_by_message() {
    let dir = scratch("oom");
    // RESOURCE_EXHAUSTED from PJRT_Error_GetCode, whatever the message says.
    let so = shared_library(
        &dir,
        "by_code",
        RUNNING_FAKE_PLUGIN,
        &[
            "-DOK_RUNS=1",
            "-DFAIL_CODE=8",
            "-DFAIL_MESSAGE=\"fake plugin: 1073741824 bytes refused\"",
        ],
    );
    let o = run_on(&dir, &so, 3, &[]);
    let err = expect_run_error(&o, "CLI012");
    assert!(
        err.contains("PJRT_LoadedExecutable_Execute failed: fake plugin: 1073741824 bytes refused"),
        "{err}"
    );
    assert_eq!(stdout(&o), "7.0\n");
    no_temporaries(&dir);
    // A plugin without PJRT_Error_GetCode: the message of XLA's allocator.
    let so = shared_library(
        &dir,
        "by_message",
        RUNNING_FAKE_PLUGIN,
        &[
            "-DOK_RUNS=0",
            "-DNO_GET_CODE",
            "-DFAIL_MESSAGE=\"RESOURCE_EXHAUSTED: Out of memory while trying to allocate 8 bytes.\"",
        ],
    );
    let err = expect_run_error(&run_on(&dir, &so, 3, &[]), "CLI012");
    assert!(
        err.contains("Out of memory while trying to allocate"),
        "{err}"
    );
    // The same plugin failing otherwise (INTERNAL) is CLI011.
    let so = shared_library(
        &dir,
        "internal",
        RUNNING_FAKE_PLUGIN,
        &[
            "-DOK_RUNS=0",
            "-DFAIL_MESSAGE=\"fake plugin: internal error\"",
        ],
    );
    expect_run_error(&run_on(&dir, &so, 3, &[]), "CLI011");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn device_n_must_be_one_of_the_plugins_devices() {
    let dir = scratch("device");
    let so = shared_library(
        &dir,
        "one",
        RUNNING_FAKE_PLUGIN,
        &["-DOK_RUNS=1000", "-DFAIL_MESSAGE=\"unused\""],
    );
    // Device 0 of a one-device plugin runs; --verbose names it.
    let o = run_on(&dir, &so, 1, &["--device", "0"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = Faber::new()
        .args(["--verbose", "run", "--backend", "xla", "--xla-plugin"])
        .arg(&so)
        .arg(dir.join("prog1.fab"))
        .current_dir(&dir)
        .output();
    assert!(
        stderr(&o).contains("xla: device 0 (fake: fake)\n"),
        "{}",
        stderr(&o)
    );
    // Device 3 is CLI013, saying how many there are, before anything runs.
    let o = run_on(&dir, &so, 1, &["--device", "3"]);
    let err = expect_error(&o, "CLI013");
    assert!(
        err.contains("device 3 (from `--device`) is not a device of the PJRT plugin")
            && err.contains("it has 1 addressable device(s) (0)"),
        "{err}"
    );
    assert!(err.contains("`faber devices` lists"), "{err}");
    // From faber.toml: the diagnostic points at the setting; the flag wins over it.
    let pkg = dir.join("pkg");
    std::fs::create_dir_all(pkg.join("src")).unwrap();
    std::fs::write(pkg.join("src/main.fab"), checkpointing_program(1)).unwrap();
    std::fs::write(
        pkg.join("faber.toml"),
        "[package]\nname = \"p\"\n\n[run]\nbackend = \"xla\"\ndevice = 5\n",
    )
    .unwrap();
    let plugin_env = |f: Faber| f.env("FABER_PJRT_PLUGIN", &so).current_dir(&pkg);
    let o = plugin_env(Faber::new().args(["run", "."])).output();
    let err = expect_error(&o, "CLI013");
    assert!(err.contains("device 5 (from `[run] device`)"), "{err}");
    assert!(err.contains("faber.toml:6:10"), "{err}");
    let o = plugin_env(Faber::new().args(["run", "--device", "0", "."])).output();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "7.0\n");
    // `--backend cpu` wins over `[run] backend = "xla"`: the interpreter's 3.
    let o = plugin_env(Faber::new().args(["run", "--backend", "cpu", "."])).output();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "3.0\n");
    // …and `--device` with the cpu backend is a usage error.
    let o =
        plugin_env(Faber::new().args(["run", "--backend", "cpu", "--device", "1", "."])).output();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("use it with `--backend xla`"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A result that stays on the device (src/tensor/remote.rs) and whose copy to the
/// host fails when the program reads it: the same codes, exit 1, and the checkpoint
/// of the last complete step.
#[test]
fn a_failed_copy_back_is_cli011_or_cli012_and_leaves_the_checkpoint_whole() {
    let dir = scratch("copyback");
    let fake =
        |name: &str, defines: &[&str]| shared_library(&dir, name, RUNNING_FAKE_PLUGIN, defines);
    let fine = fake("fine", &["-DOK_RUNS=1000", "-DFAIL_MESSAGE=\"unused\""]);
    let reference = run_on(&dir, &fine, 1, &[]);
    assert_eq!(reference.status.code(), Some(0), "{}", stderr(&reference));
    let want = std::fs::read(dir.join("ckpt.safetensors")).unwrap();
    std::fs::remove_file(dir.join("ckpt.safetensors")).unwrap();
    for (name, defines, code) in [
        (
            "oom",
            &[
                "-DOK_RUNS=1000",
                "-DTO_HOST_OK=1",
                "-DNO_GET_CODE",
                "-DFAIL_MESSAGE=\"RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4 bytes.\"",
            ][..],
            "CLI012",
        ),
        (
            "refused",
            &[
                "-DOK_RUNS=1000",
                "-DTO_HOST_OK=1",
                "-DFAIL_MESSAGE=\"fake plugin: copy refused\"",
            ][..],
            "CLI011",
        ),
    ] {
        let so = fake(name, defines);
        let o = run_on(&dir, &so, 3, &[]);
        let err = expect_run_error(&o, code);
        assert!(err.contains("failed"), "{err}");
        // What the program printed before the failure is not lost (src/cli/run.rs
        // catches the failure and flushes first).
        let first = stdout(&reference).lines().next().unwrap_or_default().to_string();
        assert!(
            !first.is_empty() && stdout(&o).starts_with(&first),
            "{name}: printed {:?}, the reference began {first:?}",
            stdout(&o)
        );
        assert_eq!(
            std::fs::read(dir.join("ckpt.safetensors")).unwrap(),
            want,
            "{name}: the checkpoint of step 0, whole"
        );
        no_temporaries(&dir);
        std::fs::remove_file(dir.join("ckpt.safetensors")).unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}
