// WeightsDir — where `--weights-out=DIR` puts the final weights, without ever deleting or
// replacing what schedc did not write. A path that exists is refused, unless
// --overwrite-weights is given and it is a directory of weights a previous run wrote (only
// `layer_<l>.npy` files). The new weights are written into a fresh temporary directory
// beside DIR and put in place in one step (an atomic exchange when DIR exists), so a reader
// sees the old weights or the new ones, never half of each.
#pragma once

#include <string>

namespace schedc::backend {

// Whether the weights may go to `dir`: "" if so, else why not (for the command line, before
// the run, and again just before writing).
std::string checkWeightsDestination(const std::string &dir, bool overwrite);

// A new empty directory beside `dir` to write into (its path in `tmp`), creating the folders
// `dir` is in if they are missing; "" or an error.
std::string makeWeightsStaging(const std::string &dir, std::string &tmp);

// Removes a staging directory and the weights written into it.
void discardWeightsStaging(const std::string &tmp);

// Puts the staged directory `tmp` in place as `dir` (exchanging it with the old weights, which
// are then removed, when `dir` exists and `overwrite` allows it); "" or an error. On failure
// `tmp` is removed and `dir` is as it was.
std::string publishWeights(const std::string &tmp, const std::string &dir, bool overwrite);

} // namespace schedc::backend
