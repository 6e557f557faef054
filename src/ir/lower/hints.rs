//! "did you mean …?" for names lowering cannot find: the candidate set each kind of
//! name is compared against (see docs/diagnostics.md, "Suggestions"). The distance
//! rule itself lives in `crate::diag::suggest`.

use super::{intrinsics, Lowerer, ModItem, TypeName};
use crate::diag::{codes, foreign, suggest, Diagnostic};
use crate::ir::ops::Op;
use crate::ir::{GenusId, Method, Ty};
use crate::source::Span;
use crate::syntax::hints::{BUILTIN_TYPES, HEAD_KEYWORDS};

/// Words that are values without being bound names.
const VALUE_KEYWORDS: &[&str] = &["verum", "falsum", "nihil", "ego", "vacua"];

impl Lowerer<'_> {
    /// Reports an error with an optional hint.
    pub fn error_hint(
        &mut self,
        code: codes::Code,
        msg: impl Into<String>,
        span: Span,
        hint: Option<String>,
    ) {
        let mut d = Diagnostic::error(code, msg, span);
        if let Some(h) = hint {
            d = d.with_hint(h);
        }
        self.diags.push(d);
    }

    /// Locals visible in the functions being lowered, innermost first.
    fn local_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        for cx in self.fns.iter().rev() {
            for scope in cx.scopes.iter().rev() {
                for l in scope.iter().rev() {
                    if !l.name.is_empty() {
                        names.push(l.name.clone());
                    }
                }
            }
        }
        names
    }

    /// The value names of module `m` (functions, globals, module aliases), sorted so
    /// that ties are reported in a stable order.
    fn module_value_names(&self, m: usize, keep: impl Fn(&ModItem) -> bool) -> Vec<String> {
        let mut names: Vec<String> = self.modules[m]
            .values
            .iter()
            .filter(|(_, item)| keep(item))
            .map(|(n, _)| n.clone())
            .collect();
        names.sort();
        names
    }

    /// An unknown value name: locals, then the module's names, then `verum`, `nihil`, …
    /// A type name used as a value gets a hint about the missing `fixum`.
    pub fn name_hint(&self, name: &str) -> Option<String> {
        let m = self.cur_module();
        let mut cands = self.local_names();
        cands.extend(self.module_value_names(m, |_| true));
        cands.extend(VALUE_KEYWORDS.iter().map(|s| s.to_string()));
        if let Some(h) = suggest::hint(name, cands.iter().map(String::as_str)) {
            return Some(h);
        }
        if let Some(h) = foreign::keyword_hint(name) {
            return Some(h);
        }
        // `nta x` parses as two expression statements, `nta` and `x`.
        if let Some(k) = suggest::nearest(name, HEAD_KEYWORDS.iter().copied()) {
            return Some(format!("did you mean the keyword `{k}`?"));
        }
        self.is_type_name(m, name).then(|| {
            format!("`{name}` is a type: a binding starts with `fixum` or `varia`: `fixum {name} x ← …`")
        })
    }

    fn is_type_name(&self, m: usize, name: &str) -> bool {
        BUILTIN_TYPES.contains(&name) || self.modules[m].types.contains_key(name)
    }

    /// An unknown function in a call `f(…)`: the module's functions, then locals
    /// (which may hold closures).
    pub fn function_hint(&self, name: &str) -> Option<String> {
        let m = self.cur_module();
        let mut cands = self.module_value_names(m, |i| matches!(i, ModItem::Func(_)));
        cands.extend(self.local_names());
        suggest::hint(name, cands.iter().map(String::as_str))
            .or_else(|| foreign::function_hint(name))
            .or_else(|| foreign::keyword_hint(name))
    }

    /// `alias.name` where module `target` exports no `name`: the nearest of its public
    /// names (functions only when `functions` is set, as for a call); else another
    /// imported module that exports exactly `name`; else the list of public names.
    pub fn member_hint(&self, target: usize, name: &str, functions: bool) -> Option<String> {
        let public = |t: usize| -> Vec<&str> {
            let info = &self.modules[t];
            let mut v: Vec<&str> = info
                .exports
                .iter()
                .filter(|n| {
                    !functions || matches!(info.values.get(n.as_str()), Some(ModItem::Func(_)))
                })
                .map(String::as_str)
                .collect();
            v.sort();
            v
        };
        let cands = public(target);
        if let Some(h) = suggest::hint(name, cands.iter().copied()) {
            return Some(h);
        }
        let m = self.cur_module();
        let mut aliases: Vec<(&str, usize)> = self.modules[m]
            .values
            .iter()
            .filter_map(|(a, item)| match item {
                ModItem::Module(t) if *t != target => Some((a.as_str(), *t)),
                _ => None,
            })
            .collect();
        aliases.sort();
        if let Some((alias, _)) = aliases.iter().find(|(_, t)| public(*t).contains(&name)) {
            return Some(format!("`{name}` is in module `{alias}`: `{alias}.{name}`"));
        }
        const SHOWN: usize = 12;
        if cands.is_empty() {
            return None;
        }
        let list: Vec<String> = cands.iter().take(SHOWN).map(|c| format!("`{c}`")).collect();
        let more = match cands.len().saturating_sub(SHOWN) {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        let what = if functions { "functions" } else { "names" };
        Some(format!(
            "the public {what} of `{}` are {}{more}",
            self.modules[target].name,
            list.join(", ")
        ))
    }

    /// A field genus `g` does not declare; a method of that name is missing its `()`.
    pub fn field_hint(&self, g: GenusId, name: &str) -> Option<String> {
        if self.methods.contains_key(&(g, name.to_string())) {
            return Some(method_without_call(name));
        }
        let genus = &self.program.genera[g.0 as usize];
        suggest::hint(name, genus.fields.iter().map(|f| f.name.as_str()))
    }

    /// A field that no genus declares (the value's type is not known statically, or
    /// is not a genus); a built-in method of that name is missing its `()`.
    pub fn any_field_hint(&self, name: &str) -> Option<String> {
        if Method::from_name(name).is_some() || Op::from_method(name).is_some() {
            return Some(method_without_call(name));
        }
        let mut cands: Vec<&str> = self
            .program
            .genera
            .iter()
            .flat_map(|g| g.fields.iter().map(|f| f.name.as_str()))
            .collect();
        cands.sort();
        cands.dedup();
        suggest::hint(name, cands)
    }

    /// An unknown method on a receiver of static type `recv`: the genus's methods
    /// and fields for a record; the tensor ops and the built-in methods for tensors
    /// and lists; the built-in methods for texts, maps and numbers; all of these and
    /// every genus's methods when the type is unknown.
    pub fn method_hint(&self, recv: &Ty, name: &str) -> Option<String> {
        let mut cands: Vec<&str> = Vec::new();
        let genus_methods = |g: Option<GenusId>| {
            let mut v: Vec<&str> = self
                .methods
                .keys()
                .filter(|(mg, _)| g.is_none_or(|g| *mg == g))
                .map(|(_, n)| n.as_str())
                .collect();
            v.sort();
            v
        };
        // Built-in names in the module's reader locale (src/ir/lower/intrinsics.rs).
        let locale = self.modules[self.cur_module()].locale;
        let ops = || {
            Op::ALL
                .iter()
                .map(move |o| intrinsics::spell(locale, o.name()))
        };
        let methods = || {
            Method::ALL
                .iter()
                .map(move |m| intrinsics::spell(locale, m.name()))
        };
        match recv {
            Ty::Record(g) => {
                cands.extend(genus_methods(Some(*g)));
                let genus = &self.program.genera[g.0 as usize];
                cands.extend(genus.fields.iter().map(|f| f.name.as_str()));
            }
            Ty::Tensor { .. } => {
                cands.extend(ops());
                cands.extend(methods());
            }
            Ty::Any => {
                cands.extend(methods());
                cands.extend(ops());
                cands.extend(genus_methods(None));
            }
            // A list converts to a tensor for the tensor ops.
            Ty::List(_) => {
                cands.extend(methods());
                cands.extend(ops());
            }
            _ => cands.extend(methods()),
        }
        if let Some(h) = suggest::hint(name, cands.iter().copied()) {
            return Some(h);
        }
        foreign::method(name, &cands).map(|m| format!("Faber calls it `{m}`: `.{m}(…)`"))
    }

    /// An unknown type name in module `m`: the built-in types, the module's genera
    /// and aliases, and the generic parameters in scope.
    pub fn type_hint(&self, m: usize, name: &str) -> Option<String> {
        let mut cands: Vec<&str> = BUILTIN_TYPES.to_vec();
        let mut local: Vec<&str> = self.modules[m].types.keys().map(String::as_str).collect();
        local.sort();
        cands.extend(local);
        cands.extend(self.generics.iter().map(String::as_str));
        suggest::hint(name, cands)
    }

    /// `alias.Name` where module `target` declares no type `Name`.
    pub fn module_type_hint(&self, target: usize, name: &str) -> Option<String> {
        let mut cands: Vec<&str> = self.modules[target]
            .types
            .iter()
            .filter(|(n, t)| {
                matches!(t, TypeName::Genus(_) | TypeName::Alias(_))
                    && self.modules[target].exports.contains(n.as_str())
            })
            .map(|(n, _)| n.as_str())
            .collect();
        cands.sort();
        suggest::hint(name, cands)
    }
}

/// `xs.longitudo` for `xs.longitudo()`.
fn method_without_call(name: &str) -> String {
    format!("`{name}` is a method: call it with `.{name}()`")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_names_round_trip() {
        for m in Method::ALL {
            assert_eq!(Method::from_name(m.name()), Some(*m));
        }
    }
}
