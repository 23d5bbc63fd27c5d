// The architectures the decoder runs, one function per family file (each returns its descriptor).
#pragma once

namespace sy::model {

class Arch;

const Arch& llama_arch();
const Arch& mamba_arch();
const Arch& jamba_arch();
const Arch& mamba2_arch();
const Arch& granitehybrid_arch();
const Arch& nemotron_h_arch();
const Arch& nemotron_h_moe_arch();
const Arch& falcon_h1_arch();
const Arch& lfm2_arch();
const Arch& lfm2moe_arch();
const Arch& qwen35_arch();
const Arch& qwen35moe_arch();
const Arch& qwen3next_arch();
const Arch& qwen3_arch();
const Arch& qwen3moe_arch();
const Arch& qwen2_arch();
const Arch& qwen2moe_arch();
const Arch& mistral3_arch();
const Arch& granite_arch();
const Arch& granitemoe_arch();
const Arch& phi3_arch();
const Arch& gemma2_arch();
const Arch& gemma3_arch();
const Arch& gpt_oss_arch();
const Arch& gemma4_arch();

}  // namespace sy::model
