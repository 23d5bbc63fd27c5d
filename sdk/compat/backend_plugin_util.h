// Moved: the backend plugin SDK is switchyard/sdk/backend.h. This forwarder keeps branches written
// against the old header building until they merge; include the new one.
#pragma once

#include "switchyard/sdk/backend.h"
