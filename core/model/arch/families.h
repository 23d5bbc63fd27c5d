// The architectures the decoder runs, one function per family file (each returns its descriptor).
#pragma once

namespace sy::model {

class Arch;

const Arch& llama_arch();
const Arch& mamba_arch();
const Arch& jamba_arch();

}  // namespace sy::model
