// error.cpp - Key functions of the error classes: their vtables and type_info
// live here, once, compiled with RTTI.
#include "tilejit/error.h"

namespace tilejit {

Error::~Error() = default;
int Error::exit_code() const { return 2; }
UserError::~UserError() = default;
int UserError::exit_code() const { return 1; }
InternalError::~InternalError() = default;
int InternalError::exit_code() const { return 2; }
DriverError::~DriverError() = default;
int DriverError::exit_code() const { return 2; }
NoGpuError::~NoGpuError() = default;
int NoGpuError::exit_code() const { return 77; }

} // namespace tilejit
