// The job spec a Start builds from what the setup panels show: every setting a panel offers
// reaches the spec (and so the job file) as shown, none is overridden here.
#pragma once

#include <QString>

#include "app/generation_spec.h"

namespace sluice::ui {

class DatasetPanel;
class ParametersPanel;

// Returns the spec of a run of modelPath (tokenizerPath: "" for the model's own) over the
// dataset panel's file, with its prompt options and bad-row policy, and the parameters panel's
// sampling, engine, device and thread settings; with "Remote server(s)…" chosen, the remote
// servers' settings and no model (modelPath and tokenizerPath are left out).
sluice::GenerationSpec specFromPanels(const QString& modelPath, const QString& tokenizerPath,
                                      const DatasetPanel& dataset,
                                      const ParametersPanel& parameters);

}  // namespace sluice::ui
