// rethrow_naming_node (graph_task.h): a node's failure, rethrown in the caller of backward.
#include "graph_task.h"
#include "wick/core/error.h"

namespace wick::autograd::detail {

namespace {
template <class E>
[[noreturn]] void again(const E& e, const std::string& where) {
  throw E(std::string(e.what()) + where);
}
}  // namespace

void rethrow_naming_node(std::exception_ptr error, const std::string& node_name, Device device) {
  const std::string where = fmt::format(" [raised in backward node {} on {}]", node_name, device);
  try {
    std::rethrow_exception(error);
  } catch (const OutOfMemoryError& e) {
    again(e, where);
  } catch (const BackendError& e) {
    again(e, where);
  } catch (const ValueError& e) {
    again(e, where);
  } catch (const TypeError& e) {
    again(e, where);
  } catch (const IndexError& e) {
    again(e, where);
  } catch (const NotImplementedError& e) {
    again(e, where);
  } catch (const StateError& e) {
    again(e, where);
  } catch (const FormatError& e) {
    again(e, where);
  } catch (const IOError& e) {
    again(e, where);
  } catch (const DeviceUnavailable& e) {
    again(e, where);
  } catch (const Error& e) {
    again(e, where);
  }
  // anything else (a user's own exception type) passes unchanged, from the try block above
  std::rethrow_exception(error);
}

}  // namespace wick::autograd::detail
