// Two-dimensional descriptor indexing flattened by a macro (sampler2D grid[2*3]), since Vulkan allows one array level.
#version 450

#define ROWS 2
#define COLUMNS 3
#define CELL(array, row, column) array[(row) * COLUMNS + (column)]

layout(set = 0, binding = 0) uniform sampler2D grid[ROWS * COLUMNS];
layout(set = 0, binding = 1) uniform texture2D cube[3 * 2 * 2];
layout(set = 0, binding = 2) uniform sampler clampSampler;

layout(push_constant) uniform Push { int row; int column; ivec3 cell; } pc;
layout(location = 0) in vec2 uv;
layout(location = 0) out vec4 color;

void main() {
    vec4 c = texture(CELL(grid, pc.row, pc.column), uv);
    c += texture(CELL(grid, 1, pc.column), uv);
    c += texture(CELL(grid, pc.row, 2), uv);
    c += texture(CELL(grid, 0, 0), uv);
    int flat3 = (pc.cell.x * 2 + pc.cell.y) * 2 + pc.cell.z;
    c += texture(sampler2D(cube[flat3], clampSampler), uv);
    color = c;
}
