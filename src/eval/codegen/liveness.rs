//! Liveness and slot packing for the register code: which slots an instruction
//! names, reads and writes, and [`compact`], which lets slots whose values are never
//! needed at the same time share one (the register allocation of `codegen/`).

use super::super::bytecode::{Code, Ins, Opnd, NO_DST};

/// The slots an instruction names directly (operands in `args` are seen separately).
pub(super) fn ins_slots(i: &Ins) -> Vec<u32> {
    let op = |o: &Opnd| match o {
        Opnd::S(s) => Some(*s),
        _ => None,
    };
    let mut v = match *i {
        Ins::Copy { dst, src } => vec![dst, src],
        Ins::Load { dst, src } => vec![dst].into_iter().chain(op(&src)).collect(),
        Ins::AddSS { dst, a, b }
        | Ins::SubSS { dst, a, b }
        | Ins::MulSS { dst, a, b }
        | Ins::CmpSS { dst, a, b, .. }
        | Ins::CmpSSJ { dst, a, b, .. } => vec![dst, a, b],
        Ins::AddSI { dst, a, .. }
        | Ins::SubSI { dst, a, .. }
        | Ins::MulSI { dst, a, .. }
        | Ins::CmpSI { dst, a, .. }
        | Ins::CmpSIJ { dst, a, .. }
        | Ins::Not { dst, a }
        | Ins::Narrow { dst, a } => vec![dst, a],
        Ins::Bin { dst, a, b, .. } => vec![dst].into_iter().chain(op(&a)).chain(op(&b)).collect(),
        Ins::Index { dst, a, i } => vec![dst, a].into_iter().chain(op(&i)).collect(),
        Ins::Rhs { dst, .. } | Ins::Call { dst, .. } => vec![dst],
        Ins::JumpIfNot { cond, .. } => vec![cond],
        Ins::JumpIfNotOp { cond, .. } => op(&cond).into_iter().collect(),
        Ins::ForPrep { var, h, .. } | Ins::ForNext { var, h, .. } => vec![var, h, h + 1, h + 2],
        Ins::Store { root, key, val, .. } => vec![root]
            .into_iter()
            .chain(op(&key))
            .chain(op(&val))
            .collect(),
        Ins::Append { dst, list, val, .. } => vec![dst, list].into_iter().chain(op(&val)).collect(),
        Ins::Ret { src } => op(&src).into_iter().collect(),
        Ins::Jump { .. }
        | Ins::RetVacuum
        | Ins::Break { .. }
        | Ins::Continue { .. }
        | Ins::Stmt { .. } => vec![],
    };
    v.retain(|&s| s != NO_DST);
    v
}

/// Set of slots `< 128`.
type Slots = u128;

fn bit(s: u32) -> Slots {
    1 << s
}

/// The slots instruction `i` reads (operands in `args` included) and the slot it
/// writes unconditionally, if any. Only for the instructions `compact` accepts.
fn use_def(i: &Ins, args: &[Opnd]) -> (Slots, Option<u32>) {
    let op = |o: &Opnd| match o {
        Opnd::S(s) => bit(*s),
        _ => 0,
    };
    match *i {
        Ins::Copy { dst, src } => (bit(src), Some(dst)),
        Ins::Load { dst, src } => (op(&src), Some(dst)),
        Ins::AddSS { dst, a, b }
        | Ins::SubSS { dst, a, b }
        | Ins::MulSS { dst, a, b }
        | Ins::CmpSS { dst, a, b, .. }
        | Ins::CmpSSJ { dst, a, b, .. } => (bit(a) | bit(b), Some(dst)),
        Ins::AddSI { dst, a, .. }
        | Ins::SubSI { dst, a, .. }
        | Ins::MulSI { dst, a, .. }
        | Ins::CmpSI { dst, a, .. }
        | Ins::CmpSIJ { dst, a, .. }
        | Ins::Not { dst, a }
        | Ins::Narrow { dst, a } => (bit(a), Some(dst)),
        Ins::Bin { dst, a, b, .. } => (op(&a) | op(&b), Some(dst)),
        Ins::Index { dst, a, i } => (bit(a) | op(&i), Some(dst)),
        Ins::Call { dst, at, n, .. } => (
            args[at as usize..(at + n) as usize]
                .iter()
                .map(op)
                .fold(0, |x, y| x | y),
            Some(dst),
        ),
        Ins::JumpIfNot { cond, .. } => (bit(cond), None),
        Ins::JumpIfNotOp { cond, .. } => (op(&cond), None),
        Ins::Ret { src } => (op(&src), None),
        _ => (0, None),
    }
}

/// Renames every slot instruction `i` names directly.
fn rename(i: &mut Ins, f: impl Fn(u32) -> u32) {
    let g = |s: &mut u32| {
        if *s != NO_DST {
            *s = f(*s)
        }
    };
    let o = |x: &mut Opnd| {
        if let Opnd::S(s) = x {
            g(s)
        }
    };
    match i {
        Ins::Copy { dst, src } => {
            g(dst);
            g(src);
        }
        Ins::Load { dst, src } => {
            g(dst);
            o(src);
        }
        Ins::AddSS { dst, a, b, .. }
        | Ins::SubSS { dst, a, b, .. }
        | Ins::MulSS { dst, a, b, .. }
        | Ins::CmpSS { dst, a, b, .. }
        | Ins::CmpSSJ { dst, a, b, .. } => {
            g(dst);
            g(a);
            g(b);
        }
        Ins::AddSI { dst, a, .. }
        | Ins::SubSI { dst, a, .. }
        | Ins::MulSI { dst, a, .. }
        | Ins::CmpSI { dst, a, .. }
        | Ins::CmpSIJ { dst, a, .. }
        | Ins::Not { dst, a }
        | Ins::Narrow { dst, a } => {
            g(dst);
            g(a);
        }
        Ins::Bin { dst, a, b, .. } => {
            g(dst);
            o(a);
            o(b);
        }
        Ins::Index { dst, a, i } => {
            g(dst);
            g(a);
            o(i);
        }
        Ins::Call { dst, .. } => g(dst),
        Ins::JumpIfNot { cond, .. } => g(cond),
        Ins::JumpIfNotOp { cond, .. } => o(cond),
        Ins::Ret { src } => o(src),
        _ => {}
    }
}

/// Shrinks the frame of a function made only of register instructions: a
/// liveness analysis over the code lets slots whose values are never needed at
/// the same time share one slot (parameters keep theirs), and a fused comparison
/// whose result is never read no longer stores it. Functions with tree-walked
/// statements (which name IR slots) or counted loops (consecutive hidden slots)
/// keep their layout. Every non-parameter slot still starts as `Vacuum`, and a
/// slot that may be read before it is written gets one of its own for as long as
/// it lives.
pub(super) fn compact(c: &mut Code, params: u32) {
    let ns = c.nslots;
    if ns > 128
        || c.ins.iter().any(|i| {
            matches!(
                i,
                Ins::Stmt { .. }
                    | Ins::Rhs { .. }
                    | Ins::Store { .. }
                    | Ins::Append { .. }
                    | Ins::ForPrep { .. }
                    | Ins::ForNext { .. }
            )
        })
    {
        return;
    }
    if c.ins.iter().flat_map(ins_slots).any(|s| s >= ns)
        || c.args.iter().any(|o| matches!(o, Opnd::S(s) if *s >= ns))
    {
        return;
    }
    let n = c.ins.len();
    let succs = |pc: usize| -> [usize; 2] {
        let none = usize::MAX;
        match c.ins[pc] {
            Ins::Jump { to } => [to as usize, none],
            Ins::JumpIfNot { to, .. }
            | Ins::JumpIfNotOp { to, .. }
            | Ins::CmpSSJ { to, .. }
            | Ins::CmpSIJ { to, .. } => [pc + 1, to as usize],
            Ins::Break { t } => [c.targets[t as usize].0 as usize, none],
            Ins::Continue { t } => [c.targets[t as usize].1 as usize, none],
            Ins::Ret { .. } | Ins::RetVacuum => [none, none],
            _ => [pc + 1, none],
        }
    };
    let ud: Vec<(Slots, Option<u32>)> = c.ins.iter().map(|i| use_def(i, &c.args)).collect();
    let mut live_in = vec![0 as Slots; n];
    let mut live_out = vec![0 as Slots; n];
    let mut changed = true;
    while changed {
        changed = false;
        for pc in (0..n).rev() {
            let out = succs(pc)
                .iter()
                .filter(|&&s| s < n)
                .fold(0, |x, &s| x | live_in[s]);
            let (u, d) = ud[pc];
            let kill = d.map_or(0, bit);
            let inn = u | (out & !kill);
            if inn != live_in[pc] || out != live_out[pc] {
                live_in[pc] = inn;
                live_out[pc] = out;
                changed = true;
            }
        }
    }
    // Fused comparisons whose result is dead only jump.
    for (i, out) in c.ins.iter_mut().zip(&live_out) {
        if let Ins::CmpSSJ { dst, .. } | Ins::CmpSIJ { dst, .. } = i {
            if out & bit(*dst) == 0 {
                *dst = NO_DST;
            }
        }
    }
    let mut adj = vec![0 as Slots; ns as usize];
    let mut named: Slots = 0;
    for (i, out) in c.ins.iter().zip(&live_out) {
        let (u, d) = use_def(i, &c.args);
        named |= u;
        if let Some(d) = d.filter(|&d| d != NO_DST) {
            named |= bit(d);
            let o = out & !bit(d);
            adj[d as usize] |= o;
            for (l, a) in adj.iter_mut().enumerate() {
                if o & bit(l as u32) != 0 {
                    *a |= bit(d);
                }
            }
        }
    }
    // Everything live on entry (parameters, and slots read before written, which
    // must find their initial `Vacuum`) holds a value at once.
    let pmask: Slots = if params >= 128 {
        Slots::MAX
    } else {
        bit(params) - 1
    };
    let entry = live_in.first().copied().unwrap_or(0) | pmask;
    for (l, a) in adj.iter_mut().enumerate() {
        if entry & bit(l as u32) != 0 {
            *a |= entry & !bit(l as u32);
        }
    }
    let mut reg = vec![u32::MAX; ns as usize];
    let mut top = params;
    for s in 0..ns {
        if s < params {
            reg[s as usize] = s;
            continue;
        }
        if named & bit(s) == 0 {
            continue;
        }
        let mut taken: Slots = 0;
        for t in 0..ns {
            if adj[s as usize] & bit(t) != 0 && reg[t as usize] != u32::MAX {
                taken |= bit(reg[t as usize]);
            }
        }
        let r = taken.trailing_ones();
        reg[s as usize] = r;
        top = top.max(r + 1);
    }
    for i in &mut c.ins {
        rename(i, |s| reg[s as usize]);
    }
    for a in &mut c.args {
        if let Opnd::S(s) = a {
            *s = reg[*s as usize];
        }
    }
    c.nslots = top;
}
