//! `faber:` imports: upstream's script kernel. A kernel module is the norma module of
//! the same name (`faber:solum` is `norma:solum`, one module with one implementation
//! per function); `faber:*` is a module that re-exports every kernel module as a
//! namespace, so `importa ex "faber:*" privata faber` gives `faber.solum.lege(…)`.
//! docs/norma.md § Script-kernel imports.

use crate::diag::suggest;

/// The kernel modules, as upstream's script kernel names them.
pub const MODULES: &[&str] = &["aleator", "consolum", "json", "processus", "solum"];

/// The canonical name of the `faber:*` module.
pub const GLOB: &str = "faber:*";

/// What a `faber:` import stands for.
#[derive(Debug, Clone, PartialEq)]
pub enum Kernel {
    /// A kernel module: the norma import to load instead (`norma:solum`).
    Module(String),
    /// `faber:*`: every kernel module, as the generated text of [`glob_text`].
    Glob,
}

/// The kernel import `spec` stands for: `None` when `spec` is not a `faber:` import,
/// `Some(Err(hint))` for a kernel module faber does not have (the hint names those
/// it has).
pub fn kernel_import(spec: &str) -> Option<Result<Kernel, String>> {
    let name = spec.strip_prefix("faber:")?;
    if name == "*" {
        return Some(Ok(Kernel::Glob));
    }
    if MODULES.contains(&name) {
        return Some(Ok(Kernel::Module(format!("norma:{name}"))));
    }
    let known: Vec<String> = MODULES.iter().map(|m| format!("`faber:{m}`")).collect();
    let mut hint = format!(
        "the script-kernel modules are {} (each is the norma module of that name), \
         and `faber:*` imports them all",
        known.join(", ")
    );
    if let Some(near) = suggest::nearest(name, MODULES.iter().copied()) {
        hint = format!("did you mean `faber:{near}`? {hint}");
    }
    Some(Err(hint))
}

/// The source of the `faber:*` module: each kernel module re-exported as a namespace.
pub fn glob_text() -> String {
    let mut text = String::from("# faber:* — every script-kernel module (src/resolve/kernel.rs)\n");
    for m in MODULES {
        text.push_str(&format!("importa ex \"norma:{m}\" publica * ut {m}\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_modules_are_norma_modules() {
        assert_eq!(
            kernel_import("faber:solum"),
            Some(Ok(Kernel::Module("norma:solum".into())))
        );
        assert_eq!(kernel_import("faber:*"), Some(Ok(Kernel::Glob)));
        assert_eq!(kernel_import("norma:solum"), None);
        assert_eq!(kernel_import("./faber"), None);
    }

    #[test]
    fn an_unknown_kernel_module_names_the_known_ones() {
        let Some(Err(hint)) = kernel_import("faber:jsno") else {
            panic!("`faber:jsno` is no kernel module");
        };
        assert!(hint.starts_with("did you mean `faber:json`?"), "{hint}");
        assert!(hint.contains("`faber:processus`"), "{hint}");
        assert!(hint.contains("`faber:*`"), "{hint}");
        // A kernel module that norma has but the kernel does not.
        assert!(matches!(kernel_import("faber:mathesis"), Some(Err(_))));
    }

    #[test]
    fn the_glob_reexports_every_module() {
        let text = glob_text();
        for m in MODULES {
            assert!(
                text.contains(&format!("\"norma:{m}\" publica * ut {m}\n")),
                "{text}"
            );
        }
    }
}
