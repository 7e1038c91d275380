// Module: tables, registration, slots, recursive views, tree operations.
#include "wick/nn/module.h"

#include <cxxabi.h>

#include <atomic>
#include <cstdlib>
#include <typeinfo>
#include <unordered_map>
#include <unordered_set>

#include "wick/autograd/grad_mode.h"
#include "wick/autograd/node.h"
#include "wick/core/native.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/module_holder.h"

namespace wick::nn {

namespace detail {
void throw_forward_arity(const std::string& module, size_t expected, const std::vector<Value>& args) {
  std::string got;
  for (size_t i = 0; i < args.size(); ++i) got += (i ? ", " : "") + args[i].describe();
  WICK_FAIL("{}.forward_value: forward takes {} argument{}, but {} {} given ({})", module, expected,
            expected == 1 ? "" : "s", args.size(), args.size() == 1 ? "was" : "were", got);
}

void throw_forward_arg(const std::string& module, size_t index, const std::exception& e) {
  if (const auto* err = dynamic_cast<const Error*>(&e))
    rethrow_with_context(
        *err, fmt::format("{}.forward_value: argument {} does not fit forward's parameter: ", module, index));
  WICK_FAIL_T(TypeError, "{}.forward_value: argument {} does not fit forward's parameter: {}", module, index, e.what());
}

void throw_no_forward(const std::string& module) {
  WICK_FAIL_T(NotImplementedError,
              "{}: forward_value cannot call this module's forward (it is overloaded, templated, missing, or uses "
              "types a Value cannot carry). Override `Value forward_value(const std::vector<Value>& args)`",
              module);
}

std::string short_type_name(const std::type_info& info) {
  int status = 0;
  char* d = abi::__cxa_demangle(info.name(), nullptr, nullptr, &status);
  std::string full = (status == 0 && d) ? d : info.name();
  std::free(d);
  // Strip namespaces, but not inside template arguments: "wick::nn::Foo<a::B>" -> "Foo<a::B>".
  const size_t lt = full.find('<');
  const size_t colon = full.rfind("::", lt == std::string::npos ? std::string::npos : lt);
  return colon == std::string::npos ? full : full.substr(colon + 2);
}

std::string module_type_name(const std::type_info& info) {
  std::string n = short_type_name(info);
  // LibTorch's convention: the class LinearImpl is the module Linear (WICK_MODULE's holder).
  constexpr std::string_view kImpl = "Impl";
  if (n.size() > kImpl.size() && n.ends_with(kImpl)) n.resize(n.size() - kImpl.size());
  return n;
}
}  // namespace detail

namespace {
// Structure versions are unique process-wide. Each thread takes them from a block of its own,
// reserved from one atomic counter, so a bump costs no atomic operation (replicate bumps every
// table entry it rewires).
std::atomic<uint64_t> g_structure_counter{0};
constexpr uint64_t kVersionBlock = 1 << 16;
uint64_t next_structure_version() {
  thread_local uint64_t next = 0, end = 0;
  if (next == end) {
    next = g_structure_counter.fetch_add(kVersionBlock, std::memory_order_relaxed) + 1;
    end = next + kVersionBlock;
  }
  return next++;
}
}  // namespace

Module::Module() : structure_version_(next_structure_version()) {}

Module::Module(const Module& other)
    : std::enable_shared_from_this<Module>(),
      parameters_(other.parameters_),
      buffers_(other.buffers_),
      children_(other.children_),
      training_(other.training_),
      replica_(false),
      structure_version_(other.structure_version_),
      type_ops_(other.type_ops_) {
  detail::note_module_copied(&other, this);
}

namespace {
// True while assign_members_from runs on this thread: Module's copy assignment (reached through
// the subclass's) then leaves the tables alone.
thread_local bool t_members_only = false;
}  // namespace

Module& Module::operator=(const Module& other) {
  if (this == &other) return *this;
  if (!t_members_only) {
    parameters_ = other.parameters_;
    buffers_ = other.buffers_;
    children_ = other.children_;
    structure_version_ = other.structure_version_;
  }
  training_ = other.training_;
  return *this;
}

bool Module::assign_members_from(const Module& other) {
  struct MembersOnly {
    bool prev = t_members_only;
    MembersOnly() { t_members_only = true; }
    ~MembersOnly() { t_members_only = prev; }
  } guard;
  return assign_from(other);
}

std::shared_ptr<Module> Module::shallow_copy() const {
  const detail::ModuleTypeOps* ops = type_ops_;
  WICK_CHECK_TYPE(ops != nullptr && *ops->type == typeid(*this),
                  "{}.shallow_copy: the module's type cannot be copied (replicate, DataParallel and clone copy "
                  "modules). Derive {} from wick::nn::Cloneable<{}> (it copies through the copy constructor), or "
                  "create it through its WICK_MODULE holder, which supplies the copy",
                  name(), detail::short_type_name(typeid(*this)), detail::short_type_name(typeid(*this)));
  WICK_CHECK_TYPE(ops->shallow_copy != nullptr,
                  "{}.shallow_copy: {} is not copy-constructible, so replicate cannot copy it. Keep tensors and "
                  "child modules in the module's tables and make every other member copyable (no "
                  "std::unique_ptr, std::mutex, references, ...)",
                  name(), detail::short_type_name(typeid(*this)));
  return ops->shallow_copy(*this);
}

bool Module::assign_from(const Module& other) {
  const detail::ModuleTypeOps* ops = type_ops_;
  if (ops == nullptr || *ops->type != typeid(*this)) return false;
  return ops->assign_from(*this, other);
}

std::string Module::name() const { return detail::module_type_name(typeid(*this)); }

void Module::bump_structure() { structure_version_ = next_structure_version(); }

std::shared_ptr<Module> Module::self_ptr() const {
  if (auto p = weak_from_this().lock()) return std::const_pointer_cast<Module>(p);
  // Not owned by a shared_ptr (a module on the stack): a non-owning handle.
  return std::shared_ptr<Module>(std::shared_ptr<Module>(), const_cast<Module*>(this));
}

// ---- the generic call ----

Value Module::forward_value(const std::vector<Value>& args) {
  if (type_ops_ != nullptr && *type_ops_->type == typeid(*this)) return type_ops_->forward_value(*this, args);
  WICK_FAIL_T(NotImplementedError,
              "{}: forward_value is not implemented. Cloneable<T> adapts a single, non-overloaded "
              "T::forward(...) automatically; a module with an overloaded or templated forward must "
              "override `Value forward_value(const std::vector<Value>& args)`",
              name());
}

Tensor Module::forward_tensor(const Tensor& x) {
  Value r = forward_value({Value(x)});
  WICK_CHECK_TYPE(r.is_tensor(), "{}: forward returned {}, but a Tensor was expected here", name(), r.describe());
  return r.tensor();
}

// ---- registration ----

void Module::check_new_name(const std::string& n, const char* what) const {
  WICK_CHECK(!n.empty(), "{}.register_{}: the name must not be empty", name(), what);
  WICK_CHECK(n.find('.') == std::string::npos,
             "{}.register_{}: name '{}' contains '.'; table names must not contain dots (dotted names "
             "are built by named_parameters() and friends)",
             name(), what, n);
  auto taken = [&](const auto& table) {
    for (const auto& e : table)
      if (e.name == n) return true;
    return false;
  };
  WICK_CHECK(!taken(parameters_) && !taken(buffers_) && !taken(children_),
             "{}.register_{}: name '{}' is already used by a parameter, buffer or child of this module", name(), what,
             n);
}

ParamSlot Module::register_parameter(std::string n, Tensor t, bool requires_grad) {
  check_new_name(n, "parameter");
  if (t.defined()) {
    WICK_CHECK(!t.grad_fn(),
               "{}.register_parameter('{}'): the tensor is not a leaf (it was computed by {}); register "
               "t.detach() instead",
               name(), n, t.grad_fn()->name());
    WICK_CHECK_TYPE(!requires_grad || t.is_floating_point(),
                    "{}.register_parameter('{}'): a {} tensor cannot require grad; pass requires_grad = false", name(),
                    n, t.dtype());
    if (t.requires_grad() != requires_grad) t.requires_grad_(requires_grad);
  }
  parameters_.push_back({std::move(n), std::move(t)});
  bump_structure();
  return ParamSlot{static_cast<int32_t>(parameters_.size() - 1)};
}

BufferSlot Module::register_buffer(std::string n, Tensor t, bool persistent) {
  check_new_name(n, "buffer");
  buffers_.push_back({std::move(n), std::move(t), persistent});
  bump_structure();
  return BufferSlot{static_cast<int32_t>(buffers_.size() - 1)};
}

int32_t Module::add_child(std::string n, std::shared_ptr<Module> c) {
  check_new_name(n, "module");
  if (c) {
    WICK_CHECK(c.get() != this, "{}.register_module('{}'): a module cannot be its own child", name(), n);
    for (const auto& m : c->modules())
      WICK_CHECK(m.get() != this,
                 "{}.register_module('{}'): this module is already inside {}; registering it would make "
                 "a cycle",
                 name(), n, c->name());
  }
  children_.push_back({std::move(n), std::move(c)});
  bump_structure();
  return static_cast<int32_t>(children_.size() - 1);
}

void Module::throw_bad_slot(int32_t index, size_t size, const char* what) const {
  WICK_FAIL_T(IndexError,
              "{}: {} slot {} does not exist (the {} table has {} entries). A slot is valid only in the "
              "module that returned it from register_{} (and in copies of that module); was it "
              "registered in the constructor?",
              name(), what, index, what, size, std::string(what) == "child" ? "module" : what);
}

void Module::throw_none_child(int32_t index) const {
  WICK_FAIL_T(IndexError, "{}: child '{}' is None; check has(slot) before using it", name(),
              children_[static_cast<size_t>(index)].name);
}

// ---- tables ----

void Module::set_parameter_entry(size_t i, Tensor t) {
  WICK_CHECK_INDEX(i < parameters_.size(), "{}.set_parameter_entry: index {} out of range (the table has {} entries)",
                   name(), i, parameters_.size());
  parameters_[i].value = std::move(t);
  bump_structure();
}

void Module::set_buffer_entry(size_t i, Tensor t) {
  WICK_CHECK_INDEX(i < buffers_.size(), "{}.set_buffer_entry: index {} out of range (the table has {} entries)", name(),
                   i, buffers_.size());
  buffers_[i].value = std::move(t);
  bump_structure();
}

void Module::set_child_entry(size_t i, std::shared_ptr<Module> m) {
  WICK_CHECK_INDEX(i < children_.size(), "{}.set_child_entry: index {} out of range (the table has {} entries)", name(),
                   i, children_.size());
  const auto& old = children_[i].value;
  WICK_CHECK_TYPE(!m || !old || typeid(*m) == typeid(*old),
                  "{}.set_child_entry: child '{}' is a {}, the replacement a {}; a child can only be replaced by a "
                  "module of the same type (its typed slot relies on it)",
                  name(), children_[i].name, old->name(), m->name());
  children_[i].value = std::move(m);
  bump_structure();
}

uint64_t Module::structure_fingerprint() const {
  uint64_t h = 0x84222325CBF29CE4ull;
  for (const auto& m : modules()) {
    uint64_t x = reinterpret_cast<uintptr_t>(m.get()) ^ (m->structure_version_ * 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 31)) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ x) * 0x100000001B3ull;
  }
  return h;
}

// ---- recursive views ----

namespace {
std::string join_name(const std::string& prefix, const std::string& n) { return prefix.empty() ? n : prefix + "." + n; }

void collect_modules(const std::shared_ptr<Module>& m, const std::string& prefix, bool include,
                     std::unordered_set<const Module*>& memo, OrderedDict<std::shared_ptr<Module>>& out) {
  if (!memo.insert(m.get()).second) return;
  if (include) out.insert(prefix, m);
  for (const auto& c : m->child_table())
    if (c.value) collect_modules(c.value, join_name(prefix, c.name), true, memo, out);
}

template <class GetTable>
OrderedDict<Tensor> named_members(const Module& self, bool recurse, GetTable&& table) {
  OrderedDict<Tensor> out;
  std::unordered_set<const TensorImpl*> memo;
  auto visit = [&](const std::string& prefix, const Module& m) {
    for (const auto& e : table(m)) {
      if (!e.value.defined() || !memo.insert(e.value.impl()).second) continue;
      out.insert(join_name(prefix, e.name), e.value);
    }
  };
  if (!recurse) {
    visit("", self);
    return out;
  }
  for (const auto& [prefix, m] : self.named_modules()) visit(prefix, *m);
  return out;
}
}  // namespace

OrderedDict<std::shared_ptr<Module>> Module::named_modules(const std::string& prefix, bool include_self) const {
  OrderedDict<std::shared_ptr<Module>> out;
  std::unordered_set<const Module*> memo;
  collect_modules(self_ptr(), prefix, include_self, memo, out);
  return out;
}

OrderedDict<Tensor> Module::named_parameters(bool recurse) const {
  return named_members(
      *this, recurse, [](const Module& m) -> const auto& { return m.parameter_table(); });
}

OrderedDict<Tensor> Module::named_buffers(bool recurse) const {
  return named_members(
      *this, recurse, [](const Module& m) -> const auto& { return m.buffer_table(); });
}

OrderedDict<std::shared_ptr<Module>> Module::named_children() const {
  OrderedDict<std::shared_ptr<Module>> out;
  std::unordered_set<const Module*> memo;
  for (const auto& c : children_)
    if (c.value && memo.insert(c.value.get()).second) out.insert(c.name, c.value);
  return out;
}

std::vector<Tensor> Module::parameters(bool recurse) const { return named_parameters(recurse).values(); }
std::vector<Tensor> Module::buffers(bool recurse) const { return named_buffers(recurse).values(); }
std::vector<std::shared_ptr<Module>> Module::children() const { return named_children().values(); }
std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) const {
  return named_modules("", include_self).values();
}

std::shared_ptr<Module> Module::get_submodule(const std::string& dotted) const {
  std::shared_ptr<Module> m = self_ptr();
  if (dotted.empty()) return m;
  size_t start = 0;
  std::string walked;
  while (true) {
    const size_t dot = dotted.find('.', start);
    const std::string part = dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    std::shared_ptr<Module> next;
    bool found = false;
    for (const auto& c : m->children_)
      if (c.name == part) {
        next = c.value;
        found = true;
      }
    WICK_CHECK_INDEX(found, "{}.get_submodule('{}'): {} has no child named '{}'", name(), dotted,
                     walked.empty() ? name() : walked, part);
    WICK_CHECK_INDEX(next != nullptr, "{}.get_submodule('{}'): child '{}' is None", name(), dotted,
                     join_name(walked, part));
    m = next;
    walked = join_name(walked, part);
    if (dot == std::string::npos) return m;
    start = dot + 1;
  }
}

namespace {
template <class Table>
Tensor find_in_table(const Module& owner, const Table& table, const std::string& dotted, const std::string& leaf,
                     const char* what) {
  for (const auto& e : table)
    if (e.name == leaf) return e.value;
  WICK_FAIL_T(IndexError, "get_{}('{}'): {} has no {} named '{}'", what, dotted, owner.name(), what, leaf);
}
}  // namespace

Tensor Module::get_parameter(const std::string& dotted) const {
  const size_t dot = dotted.rfind('.');
  auto owner = get_submodule(dot == std::string::npos ? "" : dotted.substr(0, dot));
  return find_in_table(*owner, owner->parameters_, dotted, dotted.substr(dot == std::string::npos ? 0 : dot + 1),
                       "parameter");
}

Tensor Module::get_buffer(const std::string& dotted) const {
  const size_t dot = dotted.rfind('.');
  auto owner = get_submodule(dot == std::string::npos ? "" : dotted.substr(0, dot));
  return find_in_table(*owner, owner->buffers_, dotted, dotted.substr(dot == std::string::npos ? 0 : dot + 1),
                       "buffer");
}

// ---- whole-tree operations ----

void Module::train(bool on) {
  training_ = on;
  for (const auto& c : children()) c->train(on);
}

// Note [to() keeps identity]
// Module::to() changes the data of the module's tensors, not the tensors: each parameter and
// buffer keeps its TensorImpl and gets the converted data through Tensor::set_data (PyTorch's
// `param.data = fn(param.data)`), and its gradient is converted likewise. Everything that holds
// a parameter (an optimizer, a user's variable, replicate's cached index maps) stays valid. The
// copies are all made first and swapped in afterwards, so a conversion that throws (out of
// memory, a device that is not there) changes nothing. Optimizer state is not converted, as in
// PyTorch: the optimizers check at each step that their state still fits its parameter.
void Module::convert(const std::function<Tensor(const Tensor&)>& fn) {
  NoGradGuard no_grad;
  struct Change {
    Tensor target, data, grad;
  };
  std::vector<Change> changes;
  std::unordered_set<const TensorImpl*> seen;
  auto plan = [&](const Module& owner, const std::string& entry, const Tensor& t) {
    if (!t.defined() || !seen.insert(t.impl()).second) return;
    Tensor n = fn(t);
    const Tensor& g = t.grad();
    Tensor ng = g.defined() ? fn(g) : Tensor();
    if (n.is_same(t) && (!g.defined() || ng.is_same(g))) return;
    WICK_CHECK_STATE(t.is_leaf(),
                     "{}.to: '{}' of {} is not a leaf (it is the output of {}); is this a replica made by replicate()? "
                     "Move the original module instead",
                     name(), entry, owner.name(), t.grad_fn()->name());
    changes.push_back({t, std::move(n), std::move(ng)});
  };
  for (const auto& [prefix, m] : named_modules()) {
    for (const auto& e : m->parameters_) plan(*m, prefix.empty() ? e.name : prefix + "." + e.name, e.value);
    for (const auto& e : m->buffers_) plan(*m, prefix.empty() ? e.name : prefix + "." + e.name, e.value);
  }
  for (Change& c : changes) {
    Tensor target = c.target;
    if (!c.data.is_same(target)) target.set_data(c.data);
    if (c.grad.defined()) target.set_grad(c.grad);
  }
}

Module& Module::to(Device device) {
  convert([&](const Tensor& t) { return t.device() == device ? t : native::to(t, device, t.dtype()); });
  return *this;
}

Module& Module::to(DType dtype) {
  WICK_CHECK_TYPE(is_floating(dtype), "{}.to({}): modules can only be cast to a floating-point dtype", name(), dtype);
  convert([&](const Tensor& t) {
    return (!t.is_floating_point() || t.dtype() == dtype) ? t : native::to(t, t.device(), dtype);
  });
  return *this;
}

Module& Module::to(Device device, DType dtype) {
  WICK_CHECK_TYPE(is_floating(dtype), "{}.to({}, {}): modules can only be cast to a floating-point dtype", name(),
                  device, dtype);
  convert([&](const Tensor& t) {
    const DType dt = t.is_floating_point() ? dtype : t.dtype();
    return (t.device() == device && t.dtype() == dt) ? t : native::to(t, device, dt);
  });
  return *this;
}

void Module::zero_grad(bool set_to_none) {
  WICK_CHECK_STATE(!replica_,
                   "{}.zero_grad: this module is a replica made by replicate(); its parameters are not leaves and "
                   "have no gradients of their own. Call zero_grad on the original module",
                   name());
  NoGradGuard no_grad;
  for (auto& p : parameters()) {
    const Tensor& g = p.grad();
    if (!g.defined()) continue;
    if (set_to_none) {
      p.set_grad(Tensor());
    } else {
      if (g.grad_fn()) p.set_grad(g.detach());
      native::fill_(p.grad(), 0);
    }
  }
}

void Module::apply(const std::function<void(Module&)>& fn) {
  for (const auto& c : children()) c->apply(fn);
  fn(*this);
}

}  // namespace wick::nn
