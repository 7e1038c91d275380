// The fused kernels' dispatch tables (Note [Dispatch stubs], wick/core/stubs.h).
#include "wick/core/stubs.h"

namespace wick::stubs {

DispatchStub<LogSoftmaxRowsFn> log_softmax_rows("log_softmax_rows");
DispatchStub<LogSoftmaxBackwardRowsFn> log_softmax_backward_rows("log_softmax_backward_rows");
DispatchStub<SoftmaxRowsFn> softmax_rows("softmax_rows");
DispatchStub<SoftmaxBackwardRowsFn> softmax_backward_rows("softmax_backward_rows");
DispatchStub<LayerNormRowsFn> layer_norm_rows("layer_norm_rows");
DispatchStub<LayerNormBackwardRowsFn> layer_norm_backward_rows("layer_norm_backward_rows");
DispatchStub<SgdStepFn> sgd_step("sgd_step");
DispatchStub<AdamStepFn> adam_step("adam_step");
DispatchStub<BinaryScalarFn> binary_scalar("binary_scalar");
DispatchStub<Im2ColImagesFn> im2col_images("im2col_images");
DispatchStub<Col2ImImagesFn> col2im_images("col2im_images");

}  // namespace wick::stubs
