//! `call`: the macro is found from the call's scope, its arguments counted, recursion
//! refused, and its body walked at the call's place in a scope of its own.

use super::*;

impl<'a> Walker<'a> {
    pub(super) fn call(&mut self, at: &At<'a>) -> Result<(), Fail> {
        let (tree, int, kids, it) = (self.tree, self.int, at.kids, at.it);
        let mname = kids
            .get(1)
            .and_then(|&k| tree.sym(k))
            .ok_or_else(|| self.bad(at, "Invalid syntax"))?;
        let Some((mid, copied_scope)) = find_macro(
            &self.ast,
            &self.blocks,
            &self.copy_macros,
            int,
            it.scope,
            mname,
        ) else {
            if it.opt == NONE {
                return Err(Fail {
                    messages: vec![
                        format!("Failed to resolve call statement at {}", self.here(&it)),
                        "Failed to resolve AST".into(),
                        "Failed to compile cildb: -2".into(),
                    ],
                    status: 254,
                });
            }
            // Inside an optional: the resolver disables it.
            self.ast.unresolved_stmts.push(at.si);
            return Ok(());
        };
        let (arg_list, args) = match kids.get(2) {
            Some(&l) if tree.is_list(l) && kids.len() == 3 => (l, tree.kids(l)),
            None => (NONE, &[][..]),
            _ => return Err(self.bad(at, "Invalid syntax")),
        };
        let m = &self.blocks.macros[mid as usize];
        if args.len() != m.params.len() {
            let what = if args.len() < m.params.len() {
                "Missing arguments"
            } else {
                "Unexpected arguments"
            };
            return Err(Fail::bad(vec![
                format!("{what} at {}", self.here(&it)),
                "Failed to resolve AST".into(),
                "Failed to compile cildb: -1".into(),
            ]));
        }
        self.refuse_recursion(at, mid)?;
        let m = &self.blocks.macros[mid as usize];
        let (m_parent, m_file, m_node) = (m.parent, m.file, m.node);
        let (params, declared) = (m.params.clone(), m.declared.clone());
        let macro_scope = match (copied_scope, m_parent) {
            (Some(sc), _) => sc,
            (None, NONE) => NONE,
            (None, p) => original_scope(
                &mut self.ast,
                &mut self.tables,
                &self.blocks,
                &mut self.oscope,
                p,
            ),
        };
        let ci = self.ast.calls.len() as u32;
        self.ast.calls.push(Call {
            stmt: at.si,
            caller: it.scope,
            macro_scope,
            params,
            arg_list,
            declared,
            resolved: Vec::new(),
        });
        self.ast.call_of_stmt.insert(at.si, ci);
        let prefix = match it.scope {
            NONE => Vec::new(),
            s => self.ast.scopes[s as usize].prefix.clone(),
        };
        let copy = it.scope != NONE && self.ast.scopes[it.scope as usize].copy;
        let sc = new_scope(
            &mut self.ast,
            &mut self.tables,
            prefix,
            false,
            it.scope,
            NONE,
            copy,
        );
        self.ast.scopes[sc as usize].call = ci;
        let c = self.conts.len() as u32;
        self.conts.push(Cont {
            file: m_file,
            opt: it.opt,
            scope: sc,
            block: NONE,
            original: true,
            ins_done: true,
            macro_id: mid,
            up: it.cont,
            stmt: at.si,
        });
        let base = Item {
            n: MARK,
            file: m_file,
            scope: sc,
            cont: c,
            parent: at.si,
            ..it
        };
        self.push_body(at, base, &tree.kids(m_node)[3..])
    }

    /// Fails when macro `mid` is already being expanded on the way up (a recursion),
    /// with libsepol's trace (`cil_print_recursive_call`): the macro, then each call of
    /// the cycle and the macro it expands, down to the call refused.
    fn refuse_recursion(&self, at: &At, mid: u32) -> Result<(), Fail> {
        // The usual case first, without the trace's text.
        let mut c = at.it.cont;
        while c != NONE && self.conts[c as usize].macro_id != mid {
            c = self.conts[c as usize].up;
        }
        if c == NONE {
            return Ok(());
        }
        let macro_line = |id: u32| {
            let m = &self.blocks.macros[id as usize];
            let at = loc(self.tree, self.names, m.file, m.node);
            format!("macro {} at {at}", self.int.str(m.name))
        };
        let call_line = |id: u32, where_: String| {
            format!(
                "call {} at {where_}",
                self.int.str(self.blocks.macros[id as usize].name)
            )
        };
        // Built from the refused call upward, reversed at the end.
        let mut trace = vec![call_line(mid, self.here(&at.it))];
        let mut c = at.it.cont;
        while c != NONE {
            let cont = &self.conts[c as usize];
            if cont.macro_id == mid {
                trace.push(macro_line(mid));
                trace.reverse();
                let mut lines = vec!["Recursive macro call found:".to_string()];
                lines.append(&mut trace);
                lines.push("Failed to resolve AST".into());
                return Err(Fail::bad(lines));
            }
            if cont.macro_id != NONE && cont.stmt != NONE {
                let st = &self.ast.stmts[cont.stmt as usize];
                trace.push(macro_line(cont.macro_id));
                let where_ = loc(self.tree, self.names, st.file, st.node);
                trace.push(call_line(cont.macro_id, where_));
            }
            c = cont.up;
        }
        Ok(())
    }
}
