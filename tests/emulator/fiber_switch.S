# emu_fiber_switch(void** save_sp, void* next_sp): saves the callee-saved registers of the running
# fiber on its stack, stores its stack pointer in *save_sp and resumes the fiber whose stack
# pointer is next_sp (System V x86-64). The kernel emulator's only machine code.
  .text
  .globl emu_fiber_switch
  .type emu_fiber_switch, @function
emu_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size emu_fiber_switch, .-emu_fiber_switch
  .section .note.GNU-stack,"",@progbits
