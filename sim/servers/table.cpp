// Everything about the server models that is not one model's own.
#include "sim/servers/table.hpp"

#include <array>

namespace locksim {

namespace {

#define LOCKSIM_SERVER_ENTRY(Name) &k##Name##Server,
const std::array kTable = {LOCKSIM_SERVER_MODELS(LOCKSIM_SERVER_ENTRY)};
#undef LOCKSIM_SERVER_ENTRY

}  // namespace

std::size_t ServiceBuild::index_of(const std::string& name) const {
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].name == name) return i;
  return nodes.size();
}

std::span<const ServerModel* const> server_models() { return kTable; }

const ServerModel& server_model(ServerKind k) { return *kTable.at(static_cast<std::size_t>(k)); }

void build_service(const ServerModel& model, ServiceBuild& b) {
  b.built.clear();
  for (std::size_t i = 0; i < b.nodes.size(); ++i) b.built.push_back(&model.build(b, i));
  if (model.wire) model.wire(b);
}

void add_companions(const ServerModel& model, ServiceBuild& b) {
  if (model.companions) model.companions(b);
}

}  // namespace locksim
