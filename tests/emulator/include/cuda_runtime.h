// The CPU kernel emulator's stand-in for the CUDA runtime header (see kernel_emulator.h).
#pragma once
#include "emulated_runtime.h"
#include "kernel_emulator.h"
