//! What one gfx1250 instruction reads and writes, for liveness: a *may* set
//! of registers read, a *must* set written (a kill), a *may* set written, and
//! its control flow.
//!
//! Never guess: a read the model is unsure of is counted (a source of unknown
//! width is counted at the widest the encoding allows); a write is a kill only
//! when the whole register is certainly written — 16-bit (true16) halves,
//! conditional moves, DPP (row/bank masks), lane writes, asynchronous memory
//! results and every opcode outside the lists below are not kills. An
//! instruction the model does not know reads and may write everything and
//! kills nothing ([`Effect::unknown`]). VGPR fields above v255 are completed
//! by the `s_set_vgpr_msb` mode in force ([`crate::rewrite::vgpr_mode`]); an
//! unknown mode, or a nonzero mode on an encoding whose operand slots this
//! model does not map, makes every VGPR read and possibly written.
//!
//! VGPR kills are per lane: a VALU write under EXEC kills only the lanes
//! EXEC enables. The dataflow ([`super`]) therefore forgets VGPR kills
//! across any instruction that may write EXEC ([`Effect::writes_exec`]).
//!
//! Memory instructions read their address and data registers and write their
//! results asynchronously (gfx1250's `s_wait_xcnt` exists because sources are
//! read late; results land until `s_wait_loadcnt`/`dscnt`/`kmcnt`): their
//! registers are [`Effect::memory`] and the dataflow keeps them live up to
//! every memory wait and exit of the function.

use super::regs::{Reg, RegSet, EXEC_LO, M0, VCC_LO};
use super::vmem_table;
use crate::gfx1250::walker::{self, Family};
use crate::rewrite::vgpr_mode::Mode;

/// Control flow of one instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Falls through.
    Next,
    /// `s_branch`: only the target.
    Jump(u64),
    /// `s_cbranch_*`: the target and the next instruction.
    Branch(u64),
    /// `s_call_i64` (target known) or `s_swap_pc_i64` (target resolved by the
    /// CFG builder when the PC pair is a known constant): returns to the next
    /// instruction.
    Call(Option<u64>),
    /// `s_set_pc_i64 s[30:31]`: a return in a callable function.
    Return,
    /// `s_endpgm`, `s_endpgm_saved`.
    EndProgram,
    /// A transfer to a target this model does not know (`s_set_pc_i64` of
    /// another pair, `s_rfe_i64`, `s_add_pc_i64`, `s_code_end`, `s_trap`).
    Indirect,
}

/// The register effect of one instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Effect {
    /// Registers the instruction may read.
    pub uses: RegSet,
    /// Registers it certainly writes whole, in every lane EXEC enables.
    pub kills: RegSet,
    /// Registers it may write.
    pub writes: RegSet,
    /// Whether it may write EXEC.
    pub writes_exec: bool,
    /// Whether its registers are read or written asynchronously (memory).
    pub memory: bool,
    /// Whether it waits for memory counters (`s_wait_*cnt`, `s_wait_idle`).
    pub wait: bool,
    /// Its control flow.
    pub flow: Flow,
    /// Whether the model knew the instruction (false: [`Effect::unknown`]).
    pub known: bool,
}

impl Effect {
    fn new() -> Effect {
        Effect {
            uses: RegSet::EMPTY,
            kills: RegSet::EMPTY,
            writes: RegSet::EMPTY,
            writes_exec: false,
            memory: false,
            wait: false,
            flow: Flow::Next,
            known: true,
        }
    }

    /// An instruction the model does not know: reads and may write every
    /// register (EXEC too), kills nothing, falls through.
    pub fn unknown() -> Effect {
        Effect {
            uses: RegSet::ALL,
            kills: RegSet::EMPTY,
            writes: RegSet::ALL,
            writes_exec: true,
            memory: false,
            wait: false,
            flow: Flow::Next,
            known: false,
        }
    }

    fn read_s(&mut self, field: u32, count: u8) {
        scalar_operand(&mut self.uses, field, count);
    }

    fn write_s(&mut self, field: u32, count: u8, kill: bool) {
        if field >= 128 {
            return;
        }
        let mut w = RegSet::EMPTY;
        w.insert_s(field as u8, count);
        self.writes.union_with(&w);
        if kill {
            self.kills.union_with(&w);
        }
        if w.contains(Reg::S(EXEC_LO)) || w.contains(Reg::S(super::regs::EXEC_HI)) {
            self.writes_exec = true;
        }
    }
}

/// Adds the registers a scalar source field value names: an SGPR/VCC/TTMP/M0/
/// EXEC operand (with `count` registers), `vccz`, `execz` or `scc`.
fn scalar_operand(set: &mut RegSet, field: u32, count: u8) {
    match field {
        0..=127 => set.insert_s(field as u8, count),
        251 => set.insert(Reg::S(VCC_LO)),
        252 => set.insert(Reg::S(EXEC_LO)),
        253 => set.insert(Reg::Scc),
        _ => {}
    }
}

fn dword(bytes: &[u8], i: usize) -> u32 {
    bytes
        .get(i * 4..i * 4 + 4)
        .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// The MSBs of the four operand slots (src0, src1, src2, dst) in `mode`.
#[derive(Clone, Copy)]
struct Banks(u8);

impl Banks {
    fn of(self, slot: u8) -> u16 {
        u16::from((self.0 >> (2 * slot)) & 3) * 256
    }
}

/// Operand slots.
const SRC0: u8 = 0;
const SRC1: u8 = 1;
const SRC2: u8 = 2;
const DST: u8 = 3;

/// Adds a 9-bit VALU source field: scalar operand below 256, VGPR at 256+.
fn valu_source(set: &mut RegSet, field: u32, count: u8, banks: Banks, slot: u8) {
    if field >= 256 {
        set.insert_v((field - 256) as u16 + banks.of(slot), u16::from(count));
    } else {
        scalar_operand(set, field, count.min(2));
    }
}

/// The effect of `insn` (bytes and decoded length/family/opcode) at `vaddr`,
/// with the VGPR-MSB `mode` in force before it.
pub fn effect(vaddr: u64, bytes: &[u8], d: walker::Decoded, mode: Mode) -> Effect {
    let banks = match mode {
        Mode::Known(m) => Some(Banks(m)),
        Mode::Unset | Mode::Unknown => None,
    };
    let mut e = match d.family {
        Family::Sop1 => sop1(bytes, d.op),
        Family::Sop2 => sop2(bytes, d.op),
        Family::Sopc => sopc(bytes, d.op),
        Family::Sopk => sopk(vaddr, bytes, d.op),
        Family::Sopp => sopp(vaddr, bytes, d.op),
        Family::Smem => smem(bytes, d.op),
        Family::Vop1 | Family::Vop2 | Family::Vopc | Family::Vop3 | Family::Vop3p => {
            let Some(b) = banks else {
                return vgprs_unknown(valu(bytes, d, Banks(0)));
            };
            valu(bytes, d, b)
        }
        Family::Ds | Family::Vflat | Family::Vbuffer | Family::Vopd | Family::Vopd3 => {
            let e = match d.family {
                Family::Ds => ds(bytes, d.op, banks.unwrap_or(Banks(0))),
                Family::Vflat => vflat(bytes, d.op, banks.unwrap_or(Banks(0))),
                Family::Vbuffer => vbuffer(bytes),
                Family::Vopd3 => vopd3(bytes),
                _ => vopd(bytes),
            };
            // DS and global/flat slots are mapped; the others only in mode 0.
            let mapped = match d.family {
                Family::Ds | Family::Vflat => banks.is_some(),
                _ => matches!(banks, Some(Banks(0))),
            };
            if mapped {
                e
            } else {
                vgprs_unknown(e)
            }
        }
        Family::Vimage => tensor(bytes),
        Family::Vop3px2 => match banks {
            Some(b) => scaled_wmma(bytes, b),
            None => vgprs_unknown(scaled_wmma(bytes, Banks(0))),
        },
    };
    // Every vector instruction reads EXEC.
    if matches!(
        d.family,
        Family::Vop1
            | Family::Vop2
            | Family::Vopc
            | Family::Vop3
            | Family::Vop3p
            | Family::Vopd
            | Family::Vopd3
            | Family::Vop3px2
            | Family::Ds
            | Family::Vflat
            | Family::Vbuffer
            | Family::Vimage
    ) {
        e.uses.insert(Reg::S(EXEC_LO));
    }
    e
}

/// `e` with every VGPR read and possibly written and no VGPR killed.
fn vgprs_unknown(mut e: Effect) -> Effect {
    e.uses.union_with(&RegSet::ALL_VGPRS);
    e.writes.union_with(&RegSet::ALL_VGPRS);
    let scalar_kills = e.kills;
    e.kills = RegSet::EMPTY;
    e.kills.union_with(&scalar_kills);
    e.kills.set_vgprs_from(&RegSet::EMPTY);
    e
}

fn sop1(b: &[u8], op: u16) -> Effect {
    let w0 = dword(b, 0);
    let (src0, sdst) = (w0 & 0xFF, (w0 >> 16) & 0x7F);
    let Some((used, wide)) = walker::salu_sources(Family::Sop1, op) else {
        return Effect::unknown();
    };
    let mut e = Effect::new();
    if used & 1 != 0 {
        e.read_s(src0, if wide & 1 != 0 { 2 } else { 1 });
    }
    let dst64 = matches!(op, 0x01 | 0x05 | 0x06 | 0x14 | 0x1B | 0x1D | 0x1F)
        || (0x21..=0x37).contains(&op) && op % 2 == 1
        || matches!(op, 0x47 | 0x49 | 0x4D);
    let n = if dst64 { 2 } else { 1 };
    match op {
        // s_cmov: conditional, reads SCC.
        0x02 | 0x03 => {
            e.uses.insert(Reg::Scc);
            e.write_s(sdst, 2, false);
        }
        // s_bitset0/1: read-modify-write of the destination.
        0x10..=0x13 => {
            e.read_s(sdst, if op % 2 == 1 { 2 } else { 1 });
            e.write_s(sdst, if op % 2 == 1 { 2 } else { 1 }, false);
        }
        // saveexec / wrexec: read and write EXEC, write the destination.
        0x20..=0x37 => {
            e.uses.insert_s(EXEC_LO, 1);
            e.write_s(sdst, n, true);
            e.writes.insert(Reg::S(EXEC_LO));
            e.writes_exec = true;
            e.writes.insert(Reg::Scc);
        }
        // s_movrels/movreld/movrelsd: M0-indexed: any SGPR.
        0x40..=0x44 => return Effect::unknown(),
        // s_set_pc_i64: a return through s[30:31], else unknown target.
        0x48 => {
            e.flow = if src0 == 30 {
                Flow::Return
            } else {
                Flow::Indirect
            }
        }
        // s_swap_pc_i64: a call; the return address is written whole.
        0x49 => {
            e.write_s(sdst, 2, true);
            e.flow = Flow::Call(None);
        }
        0x4A | 0x4B => e.flow = Flow::Indirect,
        // Barriers (no destination) and s_sleep_var.
        0x4E | 0x4F | 0x51 | 0x52 | 0x57 | 0x58 => {
            e.uses.insert(Reg::S(M0));
            e.writes.insert(Reg::Scc);
        }
        // s_alloc_vgpr changes the VGPR allocation: not modelled.
        0x53 => return Effect::unknown(),
        _ => {
            // May write a pair (a 64-bit result); kills what is certain.
            e.write_s(sdst, 2, false);
            e.write_s(sdst, n, true);
            e.writes.insert(Reg::Scc);
        }
    }
    e
}

fn sop2(b: &[u8], op: u16) -> Effect {
    let w0 = dword(b, 0);
    let Some((used, wide)) = walker::salu_sources(Family::Sop2, op) else {
        return Effect::unknown();
    };
    let mut e = Effect::new();
    for (i, field) in [w0 & 0xFF, (w0 >> 8) & 0xFF].into_iter().enumerate() {
        if used & (1 << i) != 0 {
            e.read_s(field, if wide & (1 << i) != 0 { 2 } else { 1 });
        }
    }
    let sdst = (w0 >> 16) & 0x7F;
    // 64-bit results: the b64/u64/i64 forms (s_bfm_b64 has 32-bit sources).
    let dst64 = matches!(
        op,
        0x09 | 0x0B
            | 0x0D
            | 0x17
            | 0x19
            | 0x1B
            | 0x1D
            | 0x1F
            | 0x21
            | 0x23
            | 0x25
            | 0x28
            | 0x29
            | 0x2B
            | 0x31
            | 0x53..=0x55
    );
    if matches!(op, 0x04 | 0x05 | 0x30 | 0x31) {
        e.uses.insert(Reg::Scc); // add/sub with carry-in, s_cselect
    }
    if matches!(op, 0x47 | 0x4E) {
        e.read_s(sdst, 1); // s_fmac: accumulates into the destination
    }
    e.write_s(sdst, 2, false);
    e.write_s(sdst, if dst64 { 2 } else { 1 }, true);
    e.writes.insert(Reg::Scc);
    e
}

fn sopc(b: &[u8], op: u16) -> Effect {
    let w0 = dword(b, 0);
    let Some((used, wide)) = walker::salu_sources(Family::Sopc, op) else {
        return Effect::unknown();
    };
    let mut e = Effect::new();
    for (i, field) in [w0 & 0xFF, (w0 >> 8) & 0xFF].into_iter().enumerate() {
        if used & (1 << i) != 0 {
            e.read_s(field, if wide & (1 << i) != 0 { 2 } else { 1 });
        }
    }
    e.kills.insert(Reg::Scc);
    e.writes.insert(Reg::Scc);
    e
}

fn sopk(vaddr: u64, b: &[u8], op: u16) -> Effect {
    let w0 = dword(b, 0);
    let sdst = (w0 >> 16) & 0x7F;
    let mut e = Effect::new();
    match op {
        0x00 | 0x11 => e.write_s(sdst, 1, true), // s_movk_i32, s_getreg_b32
        0x01 | 0x13 => {}                        // s_version, s_setreg_imm32_b32
        0x02 => {
            // s_cmovk_i32
            e.uses.insert(Reg::Scc);
            e.write_s(sdst, 1, false);
        }
        0x0F | 0x10 => {
            // s_addk_co_i32, s_mulk_i32
            e.read_s(sdst, 1);
            e.write_s(sdst, 1, true);
            e.writes.insert(Reg::Scc);
        }
        0x12 => e.read_s(sdst, 1), // s_setreg_b32
        0x14 => {
            // s_call_i64: target = next instruction + simm16 * 4.
            let simm = i64::from(w0 as u16 as i16);
            e.write_s(sdst, 2, true);
            e.flow = Flow::Call(Some(vaddr.wrapping_add(4).wrapping_add((simm * 4) as u64)));
        }
        _ => return Effect::unknown(),
    }
    e
}

fn sopp(vaddr: u64, b: &[u8], op: u16) -> Effect {
    let w0 = dword(b, 0);
    let mut e = Effect::new();
    let target = || {
        let simm = i64::from(w0 as u16 as i16);
        vaddr.wrapping_add(4).wrapping_add((simm * 4) as u64)
    };
    match op {
        0x20 => e.flow = Flow::Jump(target()),
        0x21..=0x26 => {
            e.flow = Flow::Branch(target());
            match op {
                0x21 | 0x22 => e.uses.insert(Reg::Scc),
                0x23 | 0x24 => e.uses.insert(Reg::S(VCC_LO)),
                _ => e.uses.insert(Reg::S(EXEC_LO)),
            }
        }
        0x30 | 0x31 => e.flow = Flow::EndProgram,
        0x1F | 0x10 => e.flow = Flow::Indirect, // s_code_end, s_trap
        // Memory waits.
        0x0A | 0x40..=0x4B => e.wait = true,
        // s_sendmsg, s_sendmsghalt: M0 may carry message data.
        0x36 | 0x37 => e.uses.insert(Reg::S(M0)),
        // No register effect: s_nop, s_sethalt, sleeps, s_clause,
        // s_set_vgpr_msb, s_delay_alu, s_wait_alu, s_round_mode, s_denorm_mode,
        // barrier wait/leave, wakeup, priorities, perf levels, trace data, icache.
        0x00 | 0x02..=0x08 | 0x11 | 0x12 | 0x14 | 0x15 | 0x34 | 0x35 | 0x38..=0x3C | 0x3E => {}
        _ => return Effect::unknown(),
    }
    e
}

fn smem(b: &[u8], op: u16) -> Effect {
    let (w0, w1) = (dword(b, 0), dword(b, 1));
    let sbase = (w0 & 0x3F) * 2;
    let sdata = (w0 >> 6) & 0x7F;
    let soffset = (w1 >> 25) & 0x7F;
    let mut e = Effect::new();
    e.memory = true;
    // s_buffer_* read a 4-SGPR resource; s_load_* a pair: count 4 for both.
    e.read_s(sbase, 4);
    e.read_s(soffset, 1);
    let results: u8 = match op {
        0x00 | 0x08..=0x0B | 0x10 | 0x18..=0x1B => 1,
        0x01 | 0x11 => 2,
        0x05 | 0x15 => 3,
        0x02 | 0x12 => 4,
        0x03 | 0x13 => 8,
        0x04 | 0x14 => 16,
        _ => 0,
    };
    if results > 0 {
        // Asynchronous: written, never a kill.
        e.write_s(sdata, results, false);
    } else {
        // Prefetches, cache invalidations and what the model does not name:
        // may read and write the data field, 16 registers.
        e.read_s(sdata, 16);
        e.write_s(sdata, 16, false);
    }
    e
}

/// DS: operand slots addr → src0, data0 → src1, data1 → src2, vdst → dst
/// (LLVM's VGPR lowering table, as `rewrite::ds2` uses it); widths from
/// [`vmem_table::DS`], else the widest (data 8, vdst 4).
fn ds(b: &[u8], op: u16, banks: Banks) -> Effect {
    let w1 = dword(b, 1);
    let mut e = Effect::new();
    e.memory = true;
    let v = |field: u32, slot: u8| field as u16 + banks.of(slot);
    let (dst, d0, d1) = match vmem_table::DS.get(usize::from(op)).copied().flatten() {
        Some((dst, d0, d1, _)) => (dst, d0, d1),
        None => (4, 8, 8),
    };
    e.uses.insert_v(v(w1 & 0xFF, SRC0), 1);
    e.uses.insert_v(v((w1 >> 8) & 0xFF, SRC1), u16::from(d0));
    e.uses.insert_v(v((w1 >> 16) & 0xFF, SRC2), u16::from(d1));
    e.uses.insert(Reg::S(M0));
    e.writes.insert_v(v(w1 >> 24, DST), u16::from(dst));
    e
}

/// Global, scratch and flat memory: slots vaddr → src0, vsrc → src1, vdst →
/// dst (measured: llvm-objdump-22 annotates `v1 /*v257*/` accordingly);
/// widths from [`vmem_table::FLAT`] (the three segments share opcodes), else
/// the widest (32 for the block transfers, 4 otherwise).
fn vflat(b: &[u8], op: u16, banks: Banks) -> Effect {
    let (w0, w1, w2) = (dword(b, 0), dword(b, 1), dword(b, 2));
    let mut e = Effect::new();
    e.memory = true;
    e.read_s(w0 & 0x7F, 2);
    let (dst, data, read) = match vmem_table::FLAT.get(usize::from(op)).copied().flatten() {
        Some((dst, data, _, read)) => (dst, data, read != 0),
        None => (32, 32, true),
    };
    // global_load_block / _store_block move 32 VGPRs under the M0 mask.
    if matches!(op, 0x53 | 0x54) || dst == 32 || data == 32 {
        e.uses.insert(Reg::S(M0));
    }
    let v = |field: u32, slot: u8| field as u16 + banks.of(slot);
    // The address: 64-bit for flat and for global without an SGPR base,
    // a 32-bit offset for global with one and for scratch.
    let addr = match (w0 >> 24, w0 & 0x7F) {
        (0xEC, _) | (0xEE, 0x7C) => 2,
        _ => 1,
    };
    e.uses.insert_v(v(w2 & 0xFF, SRC0), addr);
    e.uses.insert_v(v((w1 >> 23) & 0xFF, SRC1), u16::from(data));
    e.writes.insert_v(v(w1 & 0xFF, DST), u16::from(dst));
    if read {
        e.uses.insert_v(v(w1 & 0xFF, DST), u16::from(dst));
    }
    e
}

/// The SGPR count of each of the four descriptor groups of a tensor data
/// mover (128, 256, 128 and 128 bits).
const TENSOR_GROUP_LEN: [u8; 4] = [4, 8, 4, 4];

/// The tensor data movers, the only VIMAGE instructions of gfx1250
/// (`tensor_load_to_lds` 0xC4, `tensor_store_from_lds` 0xC5; the walker
/// decodes no other): they read the four descriptor groups whose first SGPRs
/// are w2 bytes 0..3 (124 = `null`: absent) and write no register (their
/// data goes to LDS or memory). Fields as llvm-mc-22 encodes them:
/// w0\[13:0\] = 0x0001 (`nv` sets bit 7), w1\[17:0\] = 0 and w1\[31:23\] =
/// 0x7C << 1, cache policy in w1\[22:18\]. llvm-objdump-22 prints a group
/// field that is not a multiple of 4 as the aligned tuple (5 → `s[4:11]`):
/// both readings are counted. M0 is counted read (nothing says the
/// instruction does not read it). Anything else — other bits set (`r128`,
/// the fields LLVM 22 ignores), a group field naming M0, EXEC or a constant
/// — reads every scalar register, as the model did for all of them before.
fn tensor(b: &[u8]) -> Effect {
    let (w0, w1, w2) = (dword(b, 0), dword(b, 1), dword(b, 2));
    let mut e = Effect::new();
    e.memory = true;
    let known_bits = matches!(w0 & 0x3FFF, 0x0001 | 0x0081)
        && w1 & 0x0003_FFFF == 0
        && w1 >> 23 == 0x7C << 1
        && b.len() == 12;
    let fields = w2.to_le_bytes();
    if !known_bits || fields.iter().any(|&f| f > NULL_FIELD) {
        e.uses = RegSet::ALL_SCALAR;
        return e;
    }
    for (&first, len) in fields.iter().zip(TENSOR_GROUP_LEN) {
        if first != NULL_FIELD {
            e.uses.insert_s(first & !3, len + (first & 3));
        }
    }
    e.uses.insert(Reg::S(M0));
    e
}

/// `null` as an SGPR field.
const NULL_FIELD: u8 = super::regs::NULL;

fn vbuffer(b: &[u8]) -> Effect {
    let (w0, w1, w2) = (dword(b, 0), dword(b, 1), dword(b, 2));
    let mut e = Effect::new();
    e.memory = true;
    e.read_s(w0 & 0x7F, 1);
    e.read_s((w1 >> 9) & 0x7F, 4);
    e.uses.insert_v((w2 & 0xFF) as u16, 2);
    // vdata: read by stores and atomics, written by loads.
    e.uses.insert_v((w1 & 0xFF) as u16, 4);
    e.writes.insert_v((w1 & 0xFF) as u16, 4);
    e
}

/// VOPD (mode 0 only): X and Y halves, 32-bit operations.
fn vopd(b: &[u8]) -> Effect {
    let (w0, w1) = (dword(b, 0), dword(b, 1));
    let op_x = (w0 >> 22) & 0xF;
    let op_y = (w0 >> 17) & 0x1F;
    let dst_x = w1 >> 24;
    let dst_y = (((w1 >> 17) & 0x7F) << 1) | ((dst_x & 1) ^ 1);
    let mut e = Effect::new();
    for (src0, vsrc1) in [
        (w0 & 0x1FF, (w0 >> 9) & 0xFF),
        (w1 & 0x1FF, (w1 >> 9) & 0xFF),
    ] {
        valu_source(&mut e.uses, src0, 2, Banks(0), SRC0);
        e.uses.insert_v(vsrc1 as u16, 2);
    }
    e.uses.insert(Reg::S(VCC_LO)); // v_dual_cndmask
    for (op, dst, max_op) in [(op_x, dst_x, 13), (op_y, dst_y, 18)] {
        // fmac (0) and dot2acc (12, 13) accumulate into the destination.
        if matches!(op, 0 | 12 | 13) {
            e.uses.insert_v(dst as u16, 1);
        }
        e.writes.insert_v(dst as u16, 2);
        // 0-11: fmac, fmaak, fmamk, mul, add, sub, subrev, mul_dx9_zero, mov,
        // cndmask, max_num, min_num; 12-13: dot2acc; Y only 16-18: add_nc_u32,
        // lshlrev_b32, and_b32 — every one a whole 32-bit write.
        if op <= 13.min(max_op) || (16..=max_op).contains(&op) {
            e.kills.insert_v(dst as u16, 1);
        }
    }
    e
}

/// VOPD3 (gfx1250, 12 bytes; mode 0 only). Fields (measured with llvm-mc-22):
/// w0[8:0] srcX0, w1[8:0] srcY0 (9-bit operands), w1[23:16] vsrcX1,
/// w1[31:24] srcX2, w2[7:0] vdstX, w2[15:8] vsrcY1, w2[23:16] srcY2,
/// w2[31:24] vdstY. Source 2 is a VGPR (`v_dual_fma_f32`) or an SGPR
/// (`v_dual_cndmask_b32`'s mask) depending on the operation: both are counted.
/// Operations may be 64-bit (`v_dual_add_f64`): every operand counts two
/// registers; destinations are read too (`v_dual_fmac_f32`) and never killed.
fn vopd3(b: &[u8]) -> Effect {
    let (w0, w1, w2) = (dword(b, 0), dword(b, 1), dword(b, 2));
    let mut e = Effect::new();
    valu_source(&mut e.uses, w0 & 0x1FF, 2, Banks(0), SRC0);
    valu_source(&mut e.uses, w1 & 0x1FF, 2, Banks(0), SRC0);
    for field in [(w1 >> 16) & 0xFF, (w2 >> 8) & 0xFF] {
        e.uses.insert_v(field as u16, 2);
    }
    for field in [w1 >> 24, (w2 >> 16) & 0xFF] {
        e.uses.insert_v(field as u16, 2);
        scalar_operand(&mut e.uses, field, 1);
    }
    e.uses.insert(Reg::S(VCC_LO));
    for dst in [w2 & 0xFF, w2 >> 24] {
        e.uses.insert_v(dst as u16, 2);
        e.writes.insert_v(dst as u16, 2);
    }
    e
}

/// A scaled WMMA (LD_SCALE prefix + WMMA, 16 bytes): the prefix's two scale
/// sources (VGPRs or SGPRs, read in bank 0 and in the mode's bank: the
/// prefix's banking is not modelled), the WMMA's three sources and
/// destination at 16 registers each; nothing killed.
fn scaled_wmma(b: &[u8], banks: Banks) -> Effect {
    let (p1, w0, w1) = (dword(b, 1), dword(b, 2), dword(b, 3));
    let mut e = Effect::new();
    for (i, field) in [p1 & 0x1FF, (p1 >> 9) & 0x1FF].into_iter().enumerate() {
        valu_source(&mut e.uses, field, 2, Banks(0), i as u8);
        valu_source(&mut e.uses, field, 2, banks, i as u8);
    }
    for (i, field) in [w1 & 0x1FF, (w1 >> 9) & 0x1FF, (w1 >> 18) & 0x1FF]
        .into_iter()
        .enumerate()
    {
        valu_source(&mut e.uses, field, 16, banks, i as u8);
    }
    let v = (w0 & 0xFF) as u16 + banks.of(DST);
    e.uses.insert_v(v, 16);
    e.writes.insert_v(v, 16);
    e
}

/// VOP3 opcodes (VOP1/VOP2/VOPC mapped at 0x180/0x100/0x000) whose VGPR
/// destination is written whole, 32 bits.
fn kills_v32(op: u16) -> bool {
    matches!(
        op,
        // VOP1: mov, cvt f32/i32/u32, f64->32 cvts, f16->f32, nearest/floor,
        // ubyte, fract..floor f32, exp, log, rcp, rsq, sqrt, sin, cos, not,
        // bfrev, clz, ctz, cls, frexp f32, i16/u16 -> 32.
        0x181 | 0x183 | 0x185..=0x188 | 0x18B..=0x18D | 0x18F | 0x191..=0x195
            | 0x1A0..=0x1A5 | 0x1A7 | 0x1AA | 0x1AB | 0x1AE | 0x1B3 | 0x1B5..=0x1BB
            | 0x1BF | 0x1C0 | 0x1EA | 0x1EB
            // VOP2: cndmask, f32 add/sub/mul, i24/u24 mul, min/max i32/u32/f32,
            // shifts and logic, co_ci, add_nc/sub_nc, fmac/fmamk/fmaak f32,
            // cvt_pk_rtz.
            | 0x101 | 0x103..=0x105 | 0x107..=0x10C | 0x111..=0x116 | 0x118..=0x11E
            | 0x120..=0x122 | 0x125..=0x127 | 0x12B..=0x12D | 0x12F
            // VOP3: mad_u32_u24, bfe, bfi, fma_f32, alignbit, min3/max3/med3 f32,
            // div_fixup_f32, perm, lshl_add, xad, add3, lshl_or, and_or, or3,
            // ldexp, bcnt, mbcnt, mul_lo/hi, pack_b32_f16, cvt_pk f16/bf16.
            | 0x20B | 0x210 | 0x212 | 0x213 | 0x216 | 0x227 | 0x229 | 0x22A | 0x231
            | 0x244..=0x246 | 0x255..=0x258 | 0x311 | 0x31C | 0x31E | 0x31F
            | 0x32C | 0x32D | 0x36D | 0x36F
    )
}

/// VOP3 opcodes whose VGPR destination is written whole, 64 bits.
fn kills_v64(op: u16) -> bool {
    matches!(
        op,
        0x184 | 0x190 | 0x196..=0x19A | 0x19D | 0x102 | 0x106 | 0x10D | 0x10E | 0x117
            | 0x11F | 0x128..=0x12A | 0x214
    )
}

/// VOP1/VOP2/VOPC/VOP3/VOP3P with the slot banks of the mode in force.
fn valu(b: &[u8], d: walker::Decoded, banks: Banks) -> Effect {
    let (w0, w1) = (dword(b, 0), dword(b, 1));
    let mut e = Effect::new();
    let src0_dpp = |field: u32| [0xFA, 0xE9, 0xEA].contains(&field);
    // (VOP3-numbered opcode, used mask, wide mask, source fields, vdst field,
    // whether the encoding is the 32-bit one, DPP).
    let (op3, used, wide, fields, vdst, short) = match d.family {
        Family::Vop1 | Family::Vop2 | Family::Vopc => {
            let Some((used, wide)) = walker::vop_short_sources(d.family, d.op) else {
                return Effect::unknown();
            };
            let (op3, vdst) = match d.family {
                Family::Vop1 => (0x180 + d.op, (w0 >> 17) & 0xFF),
                Family::Vop2 => (0x100 + d.op, (w0 >> 17) & 0xFF),
                _ => (d.op, u32::from(VCC_LO)),
            };
            // VOP2 and VOPC read vsrc1 (a VGPR); the short encoding has no
            // source 2 field (fmac/fmamk/fmaak read the destination instead).
            let vsrc1 = ((w0 >> 9) & 0xFF) + 256;
            let used = match d.family {
                Family::Vop1 => used & 1,
                _ => (used & 1) | 2,
            };
            (op3, used, wide, [w0 & 0x1FF, vsrc1, 0], vdst, true)
        }
        Family::Vop3 => {
            let (used, wide) = walker::vop3_sources(d.op);
            (
                d.op,
                used,
                wide,
                [w1 & 0x1FF, (w1 >> 9) & 0x1FF, (w1 >> 18) & 0x1FF],
                w0 & 0xFF,
                false,
            )
        }
        Family::Vop3p => return vop3p(b, d.op, banks),
        _ => return Effect::unknown(),
    };
    let dpp = src0_dpp(fields[0]);
    for (i, &field) in fields.iter().enumerate() {
        if used & (1 << i) == 0 {
            continue;
        }
        let mut field = field;
        if i == 0 && dpp {
            // The source VGPR is in the DPP dword's low byte.
            let at = if short { 1 } else { 2 };
            field = (dword(b, at) & 0xFF) + 256;
        }
        // Native VOP3 sources marked wide may be 128-bit (v_mqsad_u32_u8).
        let n = match (wide & (1 << i) != 0, op3 >= 0x200 && i == 2) {
            (false, _) => 1,
            (true, false) => 2,
            (true, true) => 4,
        };
        valu_source(&mut e.uses, field, n, banks, i as u8);
    }
    // VOP2 accumulators and constant forms read the destination.
    if matches!(op3, 0x117 | 0x12B | 0x136 | 0x13C) {
        e.uses.insert_v(vdst as u16 + banks.of(DST), 2);
    }
    // Implicit VCC: short-encoding carries and cndmask.
    if short && matches!(op3, 0x101 | 0x120..=0x122) {
        e.uses.insert(Reg::S(VCC_LO));
    }
    // Promoted VOP2 carries and cndmask read their mask from source 2.
    if !short && matches!(op3, 0x101 | 0x120..=0x122) {
        scalar_operand(&mut e.uses, fields[2], 1);
    }
    let sd = (w0 >> 8) & 0x7F; // VOP3SD scalar destination
    match op3 {
        // VOPC: v_cmp writes the mask (VCC or the VOP3 SGPR) whole;
        // v_cmpx writes EXEC.
        0x000..=0x0FF => {
            if op3 >= 0x80 {
                e.writes_exec = true;
                e.writes.insert(Reg::S(EXEC_LO));
                e.kills.insert(Reg::S(EXEC_LO));
                if !short {
                    e.writes.insert_s(vdst.min(127) as u8, 1);
                }
            } else {
                e.write_s(vdst, 1, !dpp);
            }
        }
        // v_readfirstlane_b32, v_readlane_b32: an SGPR destination.
        0x182 | 0x360 => e.write_s(vdst, 1, !dpp),
        // v_writelane_b32: one lane.
        0x361 => {
            e.uses.insert_v(vdst as u16 + banks.of(DST), 1);
            e.writes.insert_v(vdst as u16 + banks.of(DST), 1);
        }
        _ => {
            let v = vdst as u16 + banks.of(DST);
            // The VOP3SD forms also write a carry / flag SGPR.
            let sd_form = !short && matches!(op3, 0x120..=0x122 | 0x2FC..=0x2FF | 0x300..=0x302);
            if sd_form {
                e.write_s(sd, 1, true);
            } else if short && matches!(op3, 0x120..=0x122) {
                e.write_s(u32::from(VCC_LO), 1, true);
            }
            // Written: 1 or 2 registers for the listed opcodes, else up to 4
            // (v_mqsad_u32_u8).
            let width = if kills_v32(op3) {
                1
            } else if kills_v64(op3) {
                2
            } else {
                4
            };
            e.writes.insert_v(v, width);
            if !dpp && width < 4 {
                e.kills.insert_v(v, width);
            }
        }
    }
    e
}

/// VOP3P: packed math (sources as the table says) and WMMA/SWMMAC (every
/// source and the destination counted 16 registers wide, nothing killed).
fn vop3p(b: &[u8], op: u16, banks: Banks) -> Effect {
    let (w0, w1) = (dword(b, 0), dword(b, 1));
    let fields = [w1 & 0x1FF, (w1 >> 9) & 0x1FF, (w1 >> 18) & 0x1FF];
    let (used, wide) = walker::vop3p_sources(op);
    let matrix = op >= 0x33 && !matches!(op, 0x36..=0x39 | 0x3D..=0x3F);
    let mut e = Effect::new();
    for (i, &field) in fields.iter().enumerate() {
        if used & (1 << i) == 0 && !matrix {
            continue;
        }
        let n = if matrix {
            16
        } else if wide & (1 << i) != 0 {
            2
        } else {
            1
        };
        valu_source(&mut e.uses, field, n, banks, i as u8);
    }
    let v = (w0 & 0xFF) as u16 + banks.of(DST);
    if matrix {
        e.uses.insert_v(v, 16);
        e.writes.insert_v(v, 16);
        return e;
    }
    e.writes.insert_v(v, 2);
    // Whole 32-bit results: packed 16-bit math and the dot products
    // (not fma_mixlo/mixhi, which write a half).
    let whole = matches!(op, 0x00..=0x1E | 0x20 | 0x23 | 0x2A..=0x32 | 0x36..=0x39 | 0x3D);
    if whole && !matches!(op, 0x1F | 0x28 | 0x29) {
        e.kills.insert_v(v, 1);
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eff(bytes: &[u8], mode: u8) -> Effect {
        let d = walker::decode(bytes).unwrap();
        effect(0x100, bytes, d, Mode::Known(mode))
    }

    fn names(s: &RegSet) -> Vec<String> {
        s.iter().map(|r| r.to_string()).collect()
    }

    #[test]
    fn tensor_movers_read_their_descriptor_groups_only() {
        // Bytes from llvm-mc-22 -mcpu=gfx1250 -show-encoding.
        let t = |w2: [u8; 4], op: u8| {
            let mut b = [0x01, op, 0x71, 0xd0, 0, 0, 0, 0x7c, 0, 0, 0, 0];
            b[8..].copy_from_slice(&w2);
            b
        };
        let sgprs =
            |e: &Effect| -> Vec<u8> { (0..106).filter(|&n| e.uses.contains(Reg::S(n))).collect() };
        // tensor_load_to_lds s[0:3], s[4:11]
        let e = eff(&t([0x00, 0x04, 0x7c, 0x7c], 0x00), 0);
        assert!(e.memory && e.known && e.kills.is_empty() && e.writes.is_empty());
        assert_eq!(sgprs(&e), (0..12).collect::<Vec<u8>>());
        assert!(e.uses.contains(Reg::S(M0)) && e.uses.contains(Reg::S(EXEC_LO)));
        assert!(!e.uses.contains(Reg::Scc) && !e.uses.contains(Reg::S(VCC_LO)));
        // tensor_store_from_lds s[0:3], s[4:11], s[12:15], s[16:19]
        let e = eff(&t([0x00, 0x04, 0x0c, 0x10], 0x40), 0);
        assert_eq!(sgprs(&e), (0..20).collect::<Vec<u8>>());
        // tensor_load_to_lds s[100:103], s[96:103] th:TH_LOAD_NT; null groups
        let mut b = t([0x64, 0x60, 0x7c, 0x7c], 0x00);
        b[6] = 0x10;
        assert_eq!(sgprs(&eff(&b, 0)), (96..104).collect::<Vec<u8>>());
        // Group 2 absent (null), group 3 present.
        let e = eff(&t([0x00, 0x04, 0x7c, 0x20], 0x00), 0);
        assert_eq!(
            sgprs(&e),
            [(0..12).collect::<Vec<u8>>(), (32..36).collect()].concat()
        );
        // A field that is not a multiple of 4 (llvm-objdump-22 prints s[4:11]
        // for 5): both readings.
        let e = eff(&t([0x00, 0x05, 0x7c, 0x7c], 0x00), 0);
        assert_eq!(sgprs(&e), (0..13).collect::<Vec<u8>>());
        // r128 (w0 bit 4), a field naming m0, the newer LLVM's w1[31:24] = 0:
        // every scalar register.
        let mut r128 = t([0x00, 0x04, 0x7c, 0x7c], 0x00);
        r128[0] |= 0x10;
        let mut zero_w1 = t([0x00, 0x04, 0x7c, 0x7c], 0x00);
        zero_w1[7] = 0;
        for b in [r128, t([0x00, 0x04, 0x7d, 0x7c], 0x00), zero_w1] {
            let e = eff(&b, 0);
            assert_eq!(
                e.uses,
                RegSet::ALL_SCALAR.union(&{
                    let mut x = RegSet::EMPTY;
                    x.insert(Reg::S(EXEC_LO));
                    x
                })
            );
        }
    }

    #[test]
    fn llvm_encodings_read_and_write_what_llvm_prints() {
        // Bytes from llvm-mc-22 -mcpu=gfx1250 -show-encoding.
        // global_store_b32 v[2:3], v5, off
        let e = eff(
            &[0x7c, 0x80, 0x06, 0xee, 0, 0, 0x80, 0x02, 0x02, 0, 0, 0],
            0,
        );
        assert!(e.memory && e.kills.is_empty());
        for r in ["v2", "v3", "v5", "exec_lo"] {
            assert!(names(&e.uses).contains(&r.to_string()), "{r}");
        }
        // v_add_co_u32 v1, s5, v2, v3: kills s5 (VOP3SD), reads v2, v3.
        let e = eff(&[0x01, 0x05, 0x00, 0xd7, 0x02, 0x07, 0x02, 0x00], 0);
        assert_eq!(names(&e.kills), ["s5"]);
        assert_eq!(names(&e.uses), ["exec_lo", "v2", "v3"]);
        // v_cmp_eq_u32_e64 s9, v1, v2
        let e = eff(&[0x09, 0x00, 0x4a, 0xd4, 0x01, 0x05, 0x02, 0x00], 0);
        assert_eq!(names(&e.kills), ["s9"]);
        // v_fma_f32 v1, v2, v3, v4 (VOP3 0x213) in mode 0xC0: dst in bank 3.
        let e = eff(&[0x01, 0x00, 0x13, 0xd6, 0x02, 0x07, 0x12, 0x04], 0xC0);
        assert_eq!(names(&e.kills), ["v769"]);
        assert_eq!(names(&e.uses), ["exec_lo", "v2", "v3", "v4"]);
        // v_dual_fmac_f32 v10, v1, v2 :: v_dual_mul_f32 v11, v3, v4
        let e = eff(&[0x01, 0x05, 0x06, 0xc8, 0x03, 0x09, 0x0a, 0x0a], 0);
        assert_eq!(names(&e.kills), ["v10", "v11"]);
        assert!(e.uses.contains(Reg::V(10)) && e.uses.contains(Reg::V(4)));
        // VOPD in a nonzero mode: slots unmapped, every VGPR.
        let e = eff(&[0x01, 0x05, 0x06, 0xc8, 0x03, 0x09, 0x0a, 0x0a], 0x40);
        assert!(e.kills.is_empty() && e.uses.contains(Reg::V(700)));
        // s_load_b64 s[4:5], s[0:1], 0x10: asynchronous, no kill.
        let e = eff(&[0x00, 0x21, 0x00, 0xf4, 0x10, 0, 0, 0xf8], 0);
        assert!(e.kills.is_empty() && e.memory);
        assert_eq!(names(&e.writes), ["s4", "s5"]);
        // s_call_i64 s[30:31], 4
        let e = eff(&[0x04, 0x00, 0x1e, 0xba], 0);
        assert_eq!(e.flow, Flow::Call(Some(0x100 + 4 + 16)));
        assert_eq!(names(&e.kills), ["s30", "s31"]);
        // v_mov_b32_dpp: a DPP write is not a kill.
        let e = eff(&[0xfa, 0x02, 0x02, 0x7e, 0x02, 0xb1, 0x00, 0xff], 0);
        assert!(e.kills.is_empty() && e.uses.contains(Reg::V(2)));
        // v_readlane_b32 s7, v6, 1 / v_writelane_b32 v6, s31, 1
        let e = eff(&[0x07, 0x00, 0x60, 0xd7, 0x06, 0x03, 0x01, 0x00], 0);
        assert_eq!(names(&e.kills), ["s7"]);
        let e = eff(&[0x06, 0x00, 0x61, 0xd7, 0x1f, 0x02, 0x01, 0x00], 0);
        assert!(e.kills.is_empty() && e.uses.contains(Reg::V(6)) && e.uses.contains(Reg::S(31)));
        // s_and_saveexec_b32 s0, s1 (SOP1 0x20): writes EXEC.
        let e = eff(&[0x01, 0x20, 0x80, 0xbe], 0);
        assert!(e.writes_exec && e.kills.contains(Reg::S(0)));
        // VOPD3 v_dual_fma_f32 v1, v2, v3, v4 :: v_dual_fma_f32 v6, v7, v8, v9
        let e = eff(
            &[
                0x02, 0x31, 0x4d, 0xcf, 0x07, 0x01, 0x03, 0x04, 0x01, 0x08, 0x09, 0x06,
            ],
            0,
        );
        for v in [1, 2, 3, 4, 6, 7, 8, 9] {
            assert!(e.uses.contains(Reg::V(v)), "v{v}");
        }
        assert!(e.writes.contains(Reg::V(1)) && e.writes.contains(Reg::V(6)) && e.kills.is_empty());
        // v_dual_cndmask_b32 v1, v2, v3, s5 :: ...: the mask SGPR is read.
        let e = eff(
            &[
                0x02, 0x91, 0x24, 0xcf, 0x07, 0x01, 0x03, 0x05, 0x01, 0x08, 0x05, 0x06,
            ],
            0,
        );
        assert!(e.uses.contains(Reg::S(5)));
        // v_wmma_scale_f32_16x16x128_f8f6f4 (16 bytes): scales v2, v3; A/B/C 16 wide.
        let e = eff(
            &[
                0, 0, 0x35, 0xcc, 2, 7, 2, 4, 0, 0, 0x33, 0xcc, 8, 0x31, 0xa2, 4,
            ],
            0,
        );
        assert!(e.known && e.uses.contains(Reg::V(2)) && e.uses.contains(Reg::V(3)));
        assert!(e.writes.contains(Reg::V(15)) && e.kills.is_empty());
        // An unknown mode: VGPRs unknown.
        let d = walker::decode(&[0x01, 0x00, 0x13, 0xd6, 0x02, 0x07, 0x12, 0x04]).unwrap();
        let e = effect(
            0,
            &[0x01, 0x00, 0x13, 0xd6, 0x02, 0x07, 0x12, 0x04],
            d,
            Mode::Unknown,
        );
        assert!(e.kills.is_empty() && e.uses.contains(Reg::V(1000)));
    }
}
