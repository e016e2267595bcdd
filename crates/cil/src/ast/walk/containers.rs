//! Containers: `optional`, `block` (as written or copied), `blockinherit` copies, and
//! what a container's end brings (chosen tunableif branches, then a block's `in` bodies).

use super::*;

impl<'a> Walker<'a> {
    /// The end of container `cont`: its deferred tunableif statements are walked first,
    /// then (for a block) its `in` bodies; each time the end marker is pushed again
    /// below them, until nothing is left.
    pub(super) fn end_of_container(&mut self, cont: u32) {
        let c = &mut self.conts[cont as usize];
        let at = Item {
            n: MARK,
            file: c.file,
            opt: c.opt,
            cond: NONE,
            branch: NONE,
            scope: c.scope,
            cont,
            parent: c.stmt,
        };
        if let Some(list) = self.deferred.remove(&cont) {
            self.stack.push(at);
            for &x in list.iter().rev() {
                self.stack.push(Item { n: x, ..at });
            }
        } else if c.block != NONE && !c.ins_done {
            c.ins_done = true;
            let (block, original) = (c.block, c.original);
            self.stack.push(at);
            self.push_ins(at, block, original);
        }
    }

    /// Pushes the `in` bodies of `block` as containers of their own, applied in reverse
    /// document order: the latest `in` first; the `after` ones (only for the block as
    /// written, `original`) after all others.
    fn push_ins(&mut self, at: Item, block: u32, original: bool) {
        let tree = self.tree;
        let ins = &self.blocks.list[block as usize].ins;
        let order: Vec<_> = ins
            .iter()
            .filter(|x| !x.2)
            .chain(ins.iter().filter(|x| x.2 && original))
            .copied()
            .collect();
        for &(inode, ifile, _) in order.iter().rev() {
            let ci = self.conts.len() as u32;
            self.conts.push(Cont {
                file: ifile,
                opt: at.opt,
                scope: at.scope,
                block: NONE,
                original: true,
                ins_done: true,
                macro_id: NONE,
                up: at.cont,
                stmt: at.parent,
            });
            let body_at = self.blocks.in_nodes[&inode] as usize;
            let base = Item {
                n: MARK,
                file: ifile,
                cont: ci,
                ..at
            };
            self.stack.push(base);
            for &x in tree.kids(inode)[body_at..].iter().rev() {
                self.stack.push(Item { n: x, ..base });
            }
        }
    }

    /// `optional`: a new optional and a container for its body.
    pub(super) fn optional(&mut self, at: &At<'a>) -> Result<(), Fail> {
        let it = at.it;
        if at.kids.len() < 2 {
            return Err(self.bad(at, "Invalid syntax"));
        }
        self.name_at(at, 1)?;
        let oi = self.ast.optionals.len() as u32;
        self.ast.optionals.push(Optional { parent: it.opt });
        let c = self.conts.len() as u32;
        self.conts.push(Cont {
            file: it.file,
            opt: oi,
            scope: it.scope,
            block: NONE,
            original: true,
            ins_done: true,
            macro_id: NONE,
            up: it.cont,
            stmt: at.si,
        });
        let base = Item {
            n: MARK,
            opt: oi,
            cont: c,
            parent: at.si,
            ..it
        };
        self.push_body(at, base, &at.kids[2..])
    }

    /// `block`: the block as written (abstract ones are skipped), or, inside a copy, a
    /// copy of it named under the copy's prefix.
    pub(super) fn block(&mut self, at: &At<'a>) -> Result<(), Fail> {
        let (tree, int, it) = (self.tree, self.int, at.it);
        let ob = *self
            .blocks
            .of_node
            .get(&it.n)
            .ok_or_else(|| self.bad(at, "block is not allowed here"))?;
        let o = &self.blocks.list[ob as usize];
        let name = o.name;
        let copy = it.scope != NONE && self.ast.scopes[it.scope as usize].copy;
        if !copy && o.abs {
            // Abstract: only its copies count (cil.md §1.1).
            return Ok(());
        }
        let sc = if copy {
            let mut prefix = self.ast.scopes[it.scope as usize].prefix.clone();
            if !prefix.is_empty() {
                prefix.push(b'.');
            }
            prefix.extend_from_slice(int.bytes(name));
            new_scope(
                &mut self.ast,
                &mut self.tables,
                prefix,
                false,
                it.scope,
                NONE,
                true,
            )
        } else {
            original_scope(
                &mut self.ast,
                &mut self.tables,
                &self.blocks,
                &mut self.oscope,
                ob,
            )
        };
        if copy {
            register_macros(
                &self.ast,
                &self.blocks,
                tree,
                int,
                it.n,
                sc,
                &mut self.copy_macros,
            );
        }
        if !self.instances.insert(self.ast.scopes[sc as usize].table) {
            return Err(Fail::bad(vec![
                format!("Re-declaration of block {}", int.str(name)),
                format!("Bad block declaration at {}", self.here(&it)),
                "Failed to build AST".into(),
            ]));
        }
        let c = self.conts.len() as u32;
        self.conts.push(Cont {
            file: it.file,
            opt: it.opt,
            scope: sc,
            block: ob,
            original: !copy,
            ins_done: false,
            macro_id: NONE,
            up: it.cont,
            stmt: at.si,
        });
        let base = Item {
            n: MARK,
            scope: sc,
            cont: c,
            parent: at.si,
            ..it
        };
        self.push_body(at, base, &at.kids[2..])
    }

    /// `blockinherit`: a copy of the inherited block's body in a scope of the
    /// inheritor's prefix whose lookups continue in the inherited block.
    pub(super) fn blockinherit(&mut self, at: &At<'a>) -> Result<(), Fail> {
        let (tree, int, it) = (self.tree, self.int, at.it);
        let target = *self
            .blocks
            .inherit_of
            .get(&it.n)
            .ok_or_else(|| self.bad(at, "blockinherit is not allowed here"))?;
        let prefix = match it.scope {
            NONE => Vec::new(),
            s => self.ast.scopes[s as usize].prefix.clone(),
        };
        let orig = original_scope(
            &mut self.ast,
            &mut self.tables,
            &self.blocks,
            &mut self.oscope,
            target,
        );
        let sc = new_scope(
            &mut self.ast,
            &mut self.tables,
            prefix,
            false,
            it.scope,
            orig,
            true,
        );
        let (t_node, t_file) = {
            let t = &self.blocks.list[target as usize];
            (t.node, t.file)
        };
        register_macros(
            &self.ast,
            &self.blocks,
            tree,
            int,
            t_node,
            sc,
            &mut self.copy_macros,
        );
        let c = self.conts.len() as u32;
        self.conts.push(Cont {
            file: t_file,
            opt: it.opt,
            scope: sc,
            block: target,
            original: false,
            ins_done: false,
            macro_id: NONE,
            up: it.cont,
            stmt: at.si,
        });
        let base = Item {
            n: MARK,
            file: t_file,
            scope: sc,
            cont: c,
            parent: at.si,
            ..it
        };
        self.push_body(at, base, &tree.kids(t_node)[2..])
    }
}
