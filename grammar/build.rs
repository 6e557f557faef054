//! Build script: generates the parser from `grammar/faber.lalrpop` into OUT_DIR.
fn main() {
    lalrpop::Configuration::new()
        .set_in_dir("grammar")
        .set_out_dir(std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo"))
        .emit_rerun_directives(true)
        .process()
        .expect("grammar/faber.lalrpop failed to generate");
}
