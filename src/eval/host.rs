//! The evaluator side of the host functions (`hospes.*`, src/ir/host.rs): files, the
//! clock, program arguments and progress go through [`Io`]; parameter-tree walks are
//! pure functions of the value.

use std::rc::Rc;
use std::sync::OnceLock;
use std::time::Instant;

use super::host_device::text;
use super::tree::{leaves, names, too_deep, MAX_DEPTH};
use super::value::{Record, Value};
use super::{checkpoint, cursus, fault, FResult, Io};
use crate::diag::codes;
use crate::ir::host::Host;
use crate::ir::Program;

/// Runs host function `h` on evaluated arguments.
pub(crate) fn call(h: Host, args: &[Value], prog: &Program, io: &mut dyn Io) -> FResult<Value> {
    match h {
        Host::LegeTextum => {
            let path = text(h, &args[0])?;
            match io.read_file(path) {
                Ok(s) => Ok(Value::text(s)),
                Err(e) => fault(codes::RUN_HOST, format!("cannot read `{path}`: {e}")),
            }
        }
        Host::LegeOctetos => {
            let path = text(h, &args[0])?;
            match io.read_bytes(path) {
                Ok(b) => Ok(Value::Bytes(Rc::new(b))),
                Err(e) => fault(codes::RUN_HOST, format!("cannot read `{path}`: {e}")),
            }
        }
        Host::ScribeTextum => {
            let path = text(h, &args[0])?;
            match io.write_file(path, text(h, &args[1])?) {
                Ok(()) => Ok(Value::Vacuum),
                Err(e) => fault(codes::RUN_HOST, format!("cannot write `{path}`: {e}")),
            }
        }
        Host::ParaDirectorium => {
            let path = text(h, &args[0])?;
            match io.claim_dir(path) {
                Ok(()) => Ok(Value::Vacuum),
                Err(e) => fault(
                    codes::RUN_HOST,
                    format!("cannot use `{path}` as an output directory: {e}"),
                ),
            }
        }
        Host::ScribeOctetos
        | Host::SolumPartem
        | Host::SolumInveni
        | Host::SolumCarpe
        | Host::SolumAppone
        | Host::SolumExstat
        | Host::SolumDirectoriumne
        | Host::SolumRegularene
        | Host::SolumLegibilene
        | Host::SolumVinculumne
        | Host::SolumMensura
        | Host::SolumModus
        | Host::SolumStatus
        | Host::SolumSequere
        | Host::SolumVincula
        | Host::SolumDele
        | Host::SolumExscribe
        | Host::SolumRenomina
        | Host::SolumTange
        | Host::SolumModum
        | Host::SolumCrea
        | Host::SolumEnumera
        | Host::SolumAmputa
        | Host::SolumAbsolve
        | Host::SolumDomus
        | Host::SolumTemporarium
        | Host::ViaIunge
        | Host::ViaParens
        | Host::ViaNomen
        | Host::ViaSuffixum
        | Host::ConsolumHauri
        | Host::ConsolumFunde
        | Host::ConsolumDic
        | Host::ConsolumMone
        | Host::ConsolumTerminalis
        | Host::ProcessusAmbitus
        | Host::ProcessusSedes
        | Host::ProcessusIdentitas
        | Host::ProcessusExi
        | Host::ProcessusExsequi
        | Host::ProcessusCaptura => super::host_device::call(h, args, io),
        Host::AleatorFractum
        | Host::AleatorSortire
        | Host::AleatorOctetos
        | Host::AleatorSemina => super::host_random::call(h, args, io),
        Host::JsonSolve => super::json::methods::solve(&args[0]),
        Host::JsonTempta => super::json::methods::tempta(&args[0]),
        Host::JsonPange => super::json::methods::pange(&args[0]),
        Host::TomlSolve => super::json::toml::solve(&args[0]),
        Host::TomlTempta => super::json::toml::tempta(&args[0]),
        Host::ValorGenus => super::json::methods::genus(&args[0]),
        Host::CodexHex
        | Host::CodexDeHex
        | Host::CodexBase64
        | Host::CodexDeBase64
        | Host::CodexUrl
        | Host::CodexDeUrl => super::host_codex::call(h, args),
        Host::CryptaDigere => digest(h, args),
        Host::Hora => {
            static START: OnceLock<Instant> = OnceLock::new();
            Ok(Value::Float(
                START.get_or_init(Instant::now).elapsed().as_secs_f64(),
            ))
        }
        Host::Argumenta => Ok(Value::list(
            io.args().into_iter().map(Value::text).collect(),
        )),
        Host::Directorium => Ok(Value::text(io.program_dir())),
        Host::ArgumentaParsa => super::host_args::parse(prog, &args[0], &args[1], io),
        Host::ImperiumElige => super::host_args::choose(prog, &args[0], io),
        Host::ImperiumArgumenta => {
            super::host_args::command(prog, &args[0], &args[1], &args[2], io)
        }
        Host::LegeLineam => match io.read_line() {
            Ok(Some(line)) => Ok(Value::text(line)),
            Ok(None) => Ok(Value::Nihil),
            Err(e) => fault(codes::RUN_HOST, format!("cannot read standard input: {e}")),
        },
        Host::Progressus => {
            super::host_progress::progress(io, text(h, &args[0])?);
            Ok(Value::Vacuum)
        }
        Host::ProgressusFinis => {
            super::host_progress::final_report(io, text(h, &args[0])?);
            Ok(Value::Vacuum)
        }
        Host::LegeCsv => super::host_csv::read(&csv_request(h, args)?, io),
        Host::LegeTensorem => {
            super::host_tensor_file::read(text(h, &args[0])?, text(h, &args[1])?, io)
        }
        Host::Folia => {
            let mut out = Vec::new();
            leaves(&args[0], &mut out, 0)?;
            Ok(Value::list(out))
        }
        Host::NominaFoliorum => {
            let mut out = Vec::new();
            names(prog, &args[0], &mut String::new(), &mut out, 0)?;
            Ok(Value::list(out.into_iter().map(Value::text).collect()))
        }
        Host::PrimumNonFinitum => first_non_finite_leaf(prog, &args[0]),
        Host::ServaTensores => {
            let path = text(h, &args[0])?;
            let bytes = checkpoint::to_safetensors(prog, &args[1])?;
            match io.write_bytes(path, &bytes) {
                Ok(()) => Ok(Value::Vacuum),
                Err(e) => fault(codes::RUN_HOST, format!("cannot write `{path}`: {e}")),
            }
        }
        Host::CargaTensores => {
            let path = text(h, &args[0])?;
            let bytes = match io.read_bytes(path) {
                Ok(b) => b,
                Err(e) => return fault(codes::RUN_HOST, format!("cannot read `{path}`: {e}")),
            };
            checkpoint::from_safetensors(prog, h, &bytes, &args[1], &format!("`{path}`"))
        }
        Host::CargaCursum => {
            let path = text(h, &args[0])?;
            let bytes = match io.read_bytes(path) {
                Ok(b) => b,
                Err(e) => return fault(codes::RUN_HOST, format!("cannot read `{path}`: {e}")),
            };
            cursus::from_training_checkpoint(prog, h, &bytes, &args[1], &format!("`{path}`"))
        }
        Host::TensoresAdOctetos => Ok(Value::Bytes(Rc::new(checkpoint::to_versioned(
            prog, &args[0],
        )?))),
        Host::TensoresExOctetis => {
            let Value::Bytes(bytes) = &args[0] else {
                return fault(
                    codes::RUN_TYPE,
                    format!("`hospes.{}` needs octeti", h.name()),
                );
            };
            checkpoint::from_versioned(prog, h, bytes, &args[1])
        }
        Host::ExFoliis => {
            let Value::List(items) = &args[1] else {
                return fault(
                    codes::RUN_TYPE,
                    "`hospes.ex_foliis` needs a lista of tensors".to_string(),
                );
            };
            let mut next = 0;
            let tree = rebuild(h, &args[0], items, &mut next, 0)?;
            if next != items.len() {
                return fault(
                    codes::RUN_SHAPE,
                    format!(
                        "`hospes.ex_foliis`: the tree has {next} tensors but {} were given",
                        items.len()
                    ),
                );
            }
            Ok(tree)
        }
    }
}

/// `hospes.lege_csv`'s arguments: path, a one-character separator, header flag, names.
fn csv_request(h: Host, args: &[Value]) -> FResult<super::host_csv::CsvRequest<'_>> {
    let sep = text(h, &args[1])?;
    let mut chars = sep.chars();
    let (Some(separator), None) = (chars.next(), chars.next()) else {
        return fault(
            codes::RUN_DATA,
            format!("`hospes.lege_csv`: the separator must be one character, not `{sep}`"),
        );
    };
    let Value::Bool(header) = args[2] else {
        return fault(
            codes::RUN_TYPE,
            "`hospes.lege_csv` needs a bivalens header flag".to_string(),
        );
    };
    let Value::List(items) = &args[3] else {
        return fault(
            codes::RUN_TYPE,
            "`hospes.lege_csv` needs a lista of column names".to_string(),
        );
    };
    let columns = items
        .iter()
        .map(|v| text(h, v).map(str::to_string))
        .collect::<FResult<Vec<_>>>()?;
    Ok(super::host_csv::CsvRequest {
        path: text(h, &args[0])?,
        separator,
        header,
        columns,
    })
}

/// `tree` with its tensor leaves replaced, in walk order, by `items[next..]`; each
/// replacement must have the shape of the leaf it replaces.
pub(super) fn rebuild(
    who: Host,
    tree: &Value,
    items: &[Value],
    next: &mut usize,
    depth: usize,
) -> FResult<Value> {
    if depth > MAX_DEPTH {
        return too_deep();
    }
    match tree {
        Value::Tensor(old) => {
            let Some(new) = items.get(*next) else {
                return fault(
                    codes::RUN_SHAPE,
                    format!(
                        "`hospes.ex_foliis`: only {} tensors were given",
                        items.len()
                    ),
                );
            };
            let Value::Tensor(t) = new else {
                return fault(
                    codes::RUN_TYPE,
                    format!(
                        "`hospes.{}`: item {} is a {}, not a tensor",
                        who.name(),
                        *next,
                        new.type_name()
                    ),
                );
            };
            if t.shape() != old.shape() {
                return fault(
                    codes::RUN_SHAPE,
                    format!(
                        "`hospes.{}`: item {} has shape {:?} but the tree's tensor has {:?} ({})",
                        who.name(),
                        *next,
                        t.shape(),
                        old.shape(),
                        crate::tensor::shape_difference(t.shape(), old.shape())
                    ),
                );
            }
            *next += 1;
            Ok(new.clone())
        }
        Value::Record(r) => {
            let fields = r
                .fields
                .iter()
                .map(|c| rebuild(who, c, items, next, depth + 1))
                .collect::<FResult<Vec<_>>>()?;
            Ok(Value::Record(Rc::new(Record {
                genus: r.genus,
                fields,
            })))
        }
        Value::List(xs) => Ok(Value::list(
            xs.iter()
                .map(|c| rebuild(who, c, items, next, depth + 1))
                .collect::<FResult<Vec<_>>>()?,
        )),
        Value::Tuple(xs) => Ok(Value::Tuple(Rc::new(
            xs.iter()
                .map(|c| rebuild(who, c, items, next, depth + 1))
                .collect::<FResult<Vec<_>>>()?,
        ))),
        other => Ok(other.clone()),
    }
}

/// `hospes.primum_non_finitum(arbor)`: the dotted path (as `nomina_foliorum`) of the
/// first tensor leaf that holds a NaN or an infinity, or `""` when every leaf is finite.
fn first_non_finite_leaf(prog: &Program, tree: &Value) -> FResult<Value> {
    let mut ts = Vec::new();
    leaves(tree, &mut ts, 0)?;
    let tensors: Vec<&crate::tensor::Tensor> = ts
        .iter()
        .filter_map(|t| match t {
            Value::Tensor(t) => Some(&**t),
            _ => None,
        })
        .collect();
    // `faber run --backend xla`: leaves on the device are counted there, in one
    // program (src/eval/offload.rs); otherwise each is read.
    let bad = match super::offload::try_first_non_finite(&tensors) {
        Some(found) => found,
        None => tensors
            .iter()
            .position(|t| !super::finite::tensor_finite(t)),
    };
    let Some(k) = bad else {
        return Ok(Value::text(String::new()));
    };
    let mut paths = Vec::new();
    names(prog, tree, &mut String::new(), &mut paths, 0)?;
    Ok(Value::text(paths.swap_remove(k)))
}

/// `crypta_digere(alg, data)`: the SHA-2 digest named `sha256`, `sha384` or `sha512`
/// (`norma:crypta` checks the name and throws for another before calling).
fn digest(h: Host, args: &[Value]) -> FResult<Value> {
    let data = super::host_device::bytes(h, &args[1])?;
    let d = match text(h, &args[0])? {
        "sha256" => super::sha2::sha256(data),
        "sha384" => super::sha2::sha384(data),
        "sha512" => super::sha2::sha512(data),
        other => {
            return fault(
                codes::RUN_HOST,
                format!("`hospes.crypta_digere`: no algorithm `{other}` (sha256, sha384, sha512)"),
            )
        }
    };
    Ok(Value::Bytes(Rc::new(d)))
}
