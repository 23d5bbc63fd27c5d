// Moved: switchyard/sdk/rope_angles.h. This forwarder keeps branches written against the old
// header building until they merge; include the new one.
#pragma once

#include "switchyard/sdk/rope_angles.h"
