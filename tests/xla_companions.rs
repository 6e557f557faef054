//! The lowerings added for the rest of gradus' op set, reached the way a training
//! step reaches them: through whole functions and the backward companions the
//! autodiff pass generates (src/xla/stablehlo/function.rs traces them), run on a
//! real PJRT plugin against the interpreter under `--precision f32`. `nova` uses
//! `rms_norm`, `permute`, `softmax_causalis`, `concatena`, `maximum_axis`,
//! `media_axis` and `crux_entropia` against soft targets, so its companion
//! `g_nova` uses `retro_rms_norm`, `retro_permute`, `retro_softmax_causalis`,
//! `retro_pars`, `retro_maximum`, `retro_dilata`, `retro_crux_entropia` and
//! `retro_crux_scopi` (the targets are a parameter); `indices` builds a tensor with
//! `strue` from literals and a number parameter and takes its `argmax`. Runs when a
//! plugin is at hand; otherwise prints
//! `skipped: no PJRT plugin (run scripts/xla-setup.sh)`.
//!
//! Tolerance per element: 1e-5·(1 + |y|), as tests/xla_functions.rs (values of
//! magnitude ≤ 10, sums of at most 12 terms; the op tests state the per-op bounds);
//! `argmax` the same indices (rows without ties).

mod common;
mod xla_fn_support;

use xla_fn_support::{close, compile_source, func, interpreted, rand32};

use common::{pjrt_plugin, say_no_plugin};
use faber::eval::Value;
use faber::ir::Program;
use faber::tensor::{self as k, DType, SplitMix64, Tensor};
use faber::xla::{Device, FnArg, Plugin};

const SOURCE: &str = r#"
@ radix backward "g_nova"
functio nova(tf32[2, 3, 4] x, tf32[4] g, tf32[3, 4, 2] t, tf32[2, 3, 2] y) → f32 {
    fixum tf32[2, 3, 4] h ← x.rms_norm(2, 0.000001, g)
    fixum tf32[3, 4, 2] p ← h.permute([1, 2, 0])
    fixum tf32[3, 4, 2] c ← p.softmax_causalis(0.5, -1000000000.0)
    fixum tf32[2, 3, 6] j ← h.concatena(y, 2)
    fixum tf32[2, 6] m ← j.maximum_axis(1, falsum)
    fixum tf32[2, 3] s ← j.media_axis(2, falsum)
    redde c.crux_entropia(t) + m.summa() + (s ⊙ s).summa()
}

functio indices(tf32[3, 4] x, f32 a) → tf32[3] {
    fixum tf32[4] w ← x.strue([1.0, a, 2.0, -0.5], [4])
    redde x.addita(w).argmax()
}

incipit {
}
"#;

fn compile() -> Program {
    compile_source("xla_companions.fab", SOURCE)
}

#[test]
fn gradus_ops_and_their_vjps_run_in_functions_as_in_the_interpreter() {
    let Some(path) = pjrt_plugin() else {
        say_no_plugin("xla_companions");
        return;
    };
    let plugin: &'static Plugin = Box::leak(Box::new(Plugin::load(&path).unwrap()));
    let mut dev = Device::new(plugin.client().unwrap(), 0).unwrap();
    let p = compile();
    let before = k::set_precision(DType::F32);
    let mut rng = SplitMix64::new(2024);
    let tv = |t: &Tensor| Value::Tensor(std::rc::Rc::new(t.clone()));

    let (x, g, y) = (
        rand32(&mut rng, &[2, 3, 4]),
        rand32(&mut rng, &[4]),
        rand32(&mut rng, &[2, 3, 2]),
    );
    // Targets whose rows sum to 1.5, not 1: with rows summing to 1, a row-constant
    // error in ∂c would vanish in the softmax VJP after it.
    let t = k::scale(&k::softmax(&rand32(&mut rng, &[3, 4, 2])).unwrap(), 1.5).unwrap();
    let args = [
        FnArg::Tensor(&x),
        FnArg::Tensor(&g),
        FnArg::Tensor(&t),
        FnArg::Tensor(&y),
    ];
    let values = || vec![tv(&x), tv(&g), tv(&t), tv(&y)];
    let f = func(&p, "nova");
    let got = dev.run_function(&p, f, &args).unwrap();
    close(&got, &interpreted(&p, f, values()), "nova");
    let f = func(&p, "g_nova");
    let mut gargs = args.to_vec();
    gargs.extend([FnArg::Nihil, FnArg::Number(0.75)]);
    let mut vs = values();
    vs.extend([Value::Nihil, Value::Float(0.75)]);
    let want = interpreted(&p, f, vs);
    assert_eq!(want.len(), 4, "g_nova gives (∂x, ∂g, ∂t, ∂y)");
    let got = dev.run_function(&p, f, &gargs).unwrap();
    close(&got, &want, "g_nova");

    // Rows without ties: the interpreter's indices exactly.
    let xi = rand32(&mut rng, &[3, 4]);
    let f = func(&p, "indices");
    let got = dev
        .run_function(&p, f, &[FnArg::Tensor(&xi), FnArg::Number(0.25)])
        .unwrap();
    let want = interpreted(&p, f, vec![tv(&xi), Value::Float(0.25)]);
    assert_eq!(got[0].values().into_owned(), want[0], "indices");
    k::set_precision(before);
}
