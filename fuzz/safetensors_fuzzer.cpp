// libFuzzer harness: the safetensors reader on arbitrary bytes (Note [Fuzzing] in fuzz_util.h).
#include <wick/wick.h>

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Every way of treating dtypes wick cannot hold (Notes [Unsupported safetensors dtypes] and
  // [Widening safetensors dtypes]).
  for (auto mode : {wick::serialize::UnsupportedDtypes::Refuse, wick::serialize::UnsupportedDtypes::Skip,
                    wick::serialize::UnsupportedDtypes::Widen}) {
    try {
      wick::serialize::SafetensorsData d = wick::serialize::parse_safetensors(data, size, "fuzz", mode);
      // Touch what was loaded: every tensor's values, the skipped entries and the metadata.
      double acc = 0;
      for (const auto& [name, t] : d.tensors)
        if (t.numel() > 0 && t.is_floating_point()) acc += t.sum().item<double>();
      for (const auto& u : d.unsupported) {
        acc += static_cast<double>(u.name.size() + u.dtype.size() + u.shape.size());
        try {
          (void)d.at(u.name);
        } catch (const wick::NotImplementedError&) {
        }
      }
      for (const auto& w : d.widened) acc += static_cast<double>(d.at(w.name).numel());
      for (const auto& [k, v] : d.metadata) acc += static_cast<double>(k.size() + v.size());
      (void)acc;
    } catch (const wick::Error&) {
    }
  }
  return 0;
}
