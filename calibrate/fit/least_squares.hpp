// calibrate/fit/least_squares.hpp: weighted linear least squares and its goodness of fit (Eigen stays in the .cpp).
#pragma once
#include <cstddef>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace calibrate::fit {

/// Too few or inconsistent points for a fit: the user's data cannot support it (exit code 2). The message names the
/// group ("all_reduce over nvlink", "bf16 GEMMs") and what would be needed.
class FitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct LinearFit {
  std::vector<double> coef;  // one per column of the design matrix
  double r2 = 0;             // weighted coefficient of determination, 1 - SSR_w / SST_w
  double rms_rel = 0;        // root mean square of (y - y_fit) / y
  double max_rel = 0;        // largest |y - y_fit| / y
  std::size_t worst = 0;     // index of the point with max_rel
  double ssr = 0;            // weighted sum of squared residuals
};

/// Minimises sum_i w_i (y_i - sum_j X_ij c_j)^2 by a column-pivoting Householder QR of the row-scaled, column-
/// normalised design matrix (Golub and Van Loan, "Matrix Computations", 4th ed., Sec. 5.4). With w_i = 1/y_i^2 this
/// minimises relative residuals: the maximum-likelihood fit when the noise is a fixed fraction of the value, as for
/// timings spanning six orders of magnitude. Returns nullopt when the columns are linearly dependent on these points
/// (e.g. every point has the same size), i.e. the parameters are not identifiable.
std::optional<LinearFit> weighted_least_squares(const std::vector<std::vector<double>>& rows, std::span<const double> y,
                                                std::span<const double> w);

/// Weights 1/y^2 (relative residuals).
std::vector<double> relative_weights(std::span<const double> y);

}  // namespace calibrate::fit
