//! `faber devices --check`: on every device the plugin lists, compile one small
//! program (`x.addita(b)`: a `[2, 3]` f32 tensor plus a `[3]` bias row, broadcast),
//! copy its operands in, run it and copy the result back, which must equal faber's
//! native kernel bit for bit (one correctly rounded addition per element). It walks
//! the whole path a device run takes — lowering, `PJRT_Client_Compile`, transfers,
//! `PJRT_LoadedExecutable_Execute` — so a setup that lists its devices but cannot
//! run on them shows here. Failures are CLI010 (compiling) and CLI011 (running).

use faber::ir::ops::Op;
use faber::tensor::{self as k, Tensor};
use faber::xla::{Arg, Device, Plugin, Stage, XlaError};

/// One line per device: `check: device 0: compiled and ran `addita`: ok`; the
/// first failure ends the check.
pub fn check(plugin: &Plugin, options: &[(&str, i64)], devices: usize) -> Result<String, XlaError> {
    let x = Tensor::from_f32(vec![0.5, -1.25, 3.0, 1e-3, 7.5, -0.0], &[2, 3])
        .map_err(|e| XlaError::Result(e.to_string()))?;
    let b = Tensor::from_f32(vec![0.1, 0.2, -0.3], &[3])
        .map_err(|e| XlaError::Result(e.to_string()))?;
    let want = k::add(&x, &b).map_err(|e| XlaError::Result(e.to_string()))?;
    let mut out = String::new();
    for ordinal in 0..devices {
        let mut device = Device::new(plugin.client_with(options)?, ordinal)?;
        let got = device.run_op(Op::Addita, &[Arg::Tensor(&x), Arg::Tensor(&b)])?;
        let same = got.len() == 1
            && got[0].shape() == want.shape()
            && got[0]
                .values()
                .iter()
                .map(|v| v.to_bits())
                .eq(want.values().iter().map(|v| v.to_bits()));
        if !same {
            return Err(XlaError::Result(format!(
                "device {ordinal} computed {:?} for `addita`, the native kernel {:?}",
                got.iter()
                    .map(|t| t.values().into_owned())
                    .collect::<Vec<_>>(),
                want.values()
            )));
        }
        out.push_str(&format!(
            "check: device {ordinal}: compiled and ran `addita`: ok\n"
        ));
    }
    Ok(out)
}

/// Whether a check failure is a compilation's (CLI010) rather than a run's (CLI011).
pub fn is_compile_failure(e: &XlaError) -> bool {
    match e {
        XlaError::Lower(_) => true,
        XlaError::Plugin(p) => p.stage() == Stage::Compile,
        XlaError::Result(_) => false,
    }
}
