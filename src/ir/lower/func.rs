//! Per-function lowering state: slots, lexical scopes, the stack of blocks being
//! emitted, and loop / `fac` nesting for the static checks of docs/language.md § 5.

use super::Lowerer;
use crate::ir::*;

/// A source name bound to a slot.
#[derive(Clone, Debug)]
pub struct Local {
    pub name: String,
    pub slot: Slot,
    /// `varia` (or a parameter): may be reassigned.
    pub mutable: bool,
    /// False for a deferred `fixum` until its one assignment.
    pub initialized: bool,
}

pub struct FnCx {
    pub id: FuncId,
    pub module: usize,
    pub slots: Vec<SlotInfo>,
    /// Innermost scope last; each scope lists its locals in declaration order.
    pub scopes: Vec<Vec<Local>>,
    /// Blocks under construction; statements go to the last one.
    pub blocks: Vec<Vec<Stmt>>,
    pub loops: u32,
    pub tries: u32,
    pub throws: bool,
    /// The declared result type (`None` for entry points and tests).
    pub ret: Option<Ty>,
    /// Slot of `ego` in genus methods.
    pub ego: Option<Slot>,
}

impl Lowerer<'_> {
    /// Starts lowering function `id`: its parameters become slots `0..n`, named by
    /// `params` (name, mutable) and typed by the signature.
    pub fn begin(&mut self, id: FuncId, module: usize, params: &[(String, bool)], ret: Option<Ty>) {
        let sig = self.sigs[id.0 as usize].clone();
        let mut cx = FnCx {
            id,
            module,
            slots: Vec::new(),
            scopes: vec![Vec::new()],
            blocks: vec![Vec::new()],
            loops: 0,
            tries: 0,
            throws: sig.throws,
            ret,
            ego: None,
        };
        for (i, (name, mutable)) in params.iter().enumerate() {
            let slot = Slot(i as u32);
            cx.slots.push(SlotInfo {
                name: name.clone(),
                ty: sig.params.get(i).cloned().unwrap_or(Ty::Any),
                narrow: sig.narrow.get(i).copied().unwrap_or(false),
            });
            if name == "ego" {
                cx.ego = Some(slot);
            } else {
                cx.scopes[0].push(Local {
                    name: name.clone(),
                    slot,
                    mutable: *mutable,
                    initialized: true,
                });
            }
        }
        self.fns.push(cx);
    }

    /// Ends the current function and stores its body and slots.
    pub fn finish(&mut self, id: FuncId) {
        let cx = self.fns.pop().expect("finish after begin");
        let mut blocks = cx.blocks;
        let body = blocks.pop().unwrap_or_default();
        let f = &mut self.program.functions[id.0 as usize];
        f.slots = cx.slots;
        f.body = Block { stmts: body };
    }

    pub fn cx(&mut self) -> &mut FnCx {
        self.fns.last_mut().expect("lowering inside a function")
    }

    /// A type as a diagnostic about the current module shows it: its primitive type
    /// words in the module's reader locale (docs/language.md § Reader locales).
    pub fn show_ty(&self, t: &Ty) -> String {
        crate::ir::print::ty_in(&self.program, t, self.modules[self.cur_module()].locale)
    }

    pub fn cur_module(&self) -> usize {
        self.fns.last().map_or(0, |c| c.module)
    }

    pub fn emit(&mut self, s: Stmt) {
        self.cx()
            .blocks
            .last_mut()
            .expect("a block is open")
            .push(s);
    }

    pub fn new_slot(&mut self, name: &str, ty: Ty) -> Slot {
        let cx = self.cx();
        let slot = Slot(cx.slots.len() as u32);
        cx.slots.push(SlotInfo {
            name: name.to_string(),
            ty,
            narrow: false,
        });
        slot
    }

    /// Marks a local declared `f32`/`f16` (`SlotInfo::narrow`).
    pub fn mark_narrow(&mut self, slot: Slot) {
        self.cx().slots[slot.0 as usize].narrow = true;
    }

    /// `dst ← op`. When `op` is the unnamed temporary written by the statement just
    /// emitted, that statement writes `dst` directly instead (no copy).
    pub fn assign_slot(&mut self, dst: Slot, op: Operand, span: crate::source::Span) {
        if let Operand::Slot(t) = op {
            let cx = self.cx();
            let is_temp = cx
                .slots
                .get(t.0 as usize)
                .is_some_and(|i| i.name.is_empty());
            if let Some(Stmt::Let { dst: last, .. }) =
                cx.blocks.last_mut().and_then(|b| b.last_mut())
            {
                if *last == t && is_temp {
                    *last = dst;
                    return;
                }
            }
        }
        self.emit(Stmt::Let {
            dst,
            rhs: Rhs::Use(op),
            span,
        });
    }

    /// A fresh unnamed slot holding `rhs`.
    pub fn temp(&mut self, rhs: Rhs, ty: Ty, span: crate::source::Span) -> Operand {
        let dst = self.new_slot("", ty);
        self.emit(Stmt::Let { dst, rhs, span });
        Operand::Slot(dst)
    }

    pub fn push_block(&mut self) {
        self.cx().blocks.push(Vec::new());
        self.cx().scopes.push(Vec::new());
    }

    pub fn pop_block(&mut self) -> Block {
        let cx = self.cx();
        cx.scopes.pop();
        Block {
            stmts: cx.blocks.pop().unwrap_or_default(),
        }
    }

    /// Binds `name` in the innermost scope; reports a same-scope redeclaration.
    pub fn bind(
        &mut self,
        ident: &crate::syntax::ast::Ident,
        slot: Slot,
        mutable: bool,
        initialized: bool,
    ) {
        let dup = self
            .cx()
            .scopes
            .last()
            .is_some_and(|s| s.iter().any(|l| l.name == ident.name));
        if dup {
            self.error(
                crate::diag::codes::SEM_DUPLICATE,
                format!("`{}` is already declared in this block", ident.name),
                ident.span,
            );
        }
        let local = Local {
            name: ident.name.clone(),
            slot,
            mutable,
            initialized,
        };
        self.cx()
            .scopes
            .last_mut()
            .expect("a scope is open")
            .push(local);
    }

    /// The innermost local named `name` in the current function.
    pub fn local(&mut self, name: &str) -> Option<&mut Local> {
        self.cx()
            .scopes
            .iter_mut()
            .rev()
            .flat_map(|s| s.iter_mut().rev())
            .find(|l| l.name == name)
    }

    pub fn slot_ty(&self, s: Slot) -> Ty {
        self.fns
            .last()
            .and_then(|c| c.slots.get(s.0 as usize))
            .map_or(Ty::Any, |i| i.ty.clone())
    }
}
