// fanin_si5324_init: programs the board's Si5324 jitter attenuator over I2C after reset,
// without a processor: an I2C master (standard mode, open drain, no clock stretching:
// neither the PCA9548 mux nor the Si5324 stretches) stepping through a ROM of bus writes.
//
// ROM entry: {start, stop, byte}. `start`: send START before the byte (the byte is then
// the address byte); `stop`: send STOP after the byte's ACK. Each write is
// START, address+W, register, value(s), STOP. A NACK anywhere ends the transfer with STOP;
// the whole ROM (mux selection included) is retried after RETRY_DELAY, at most MAX_TRIES
// times, after which `error` is set. After the last write `done` rises LOCK_DELAY later,
// the time allowed for the Si5324's self-calibration and lock (the ROM's last write
// starts it); `done` releases the transceivers' reset.
//
// Bus timing at Q = CLK_HZ / (4 * I2C_HZ) clock cycles per quarter SCL period: SCL high
// 2Q, low 2Q, START hold 2Q, STOP setup 2Q, bus free 2Q before the next START
// (100 kHz: 5 us each, above the standard-mode minimums of 4.0 / 4.7 us).
module fanin_si5324_init #(
    parameter CLK_HZ = 100000000,
    parameter I2C_HZ = 100000,
    // Cycles after reset before the first transfer (the Si5324 needs time after its reset).
    parameter START_DELAY = CLK_HZ / 50,
    // Cycles between a NACKed attempt and the retry.
    parameter RETRY_DELAY = CLK_HZ / 100,
    // Cycles after the last write before `done` (self-calibration and lock).
    parameter LOCK_DELAY = CLK_HZ,
    parameter MAX_TRIES = 8
) (
    input  wire clk,
    input  wire rst,
    input  wire sda_i,
    // Open-drain drives: 1 pulls the line low, 0 releases it.
    output reg  scl_low = 1'b0,
    output reg  sda_low = 1'b0,
    output reg  done = 1'b0,
    output reg  error = 1'b0
);

// Timer loads for steps of Q and 2Q cycles (a step lasts its load + 1 cycles).
localparam [31:0] LD_Q = CLK_HZ / (4 * I2C_HZ) - 1;
localparam [31:0] LD_2Q = 2 * CLK_HZ / (4 * I2C_HZ) - 1;
localparam [3:0] LAST_TRY = MAX_TRIES - 1;

// ---- The ROM (generated from the register table in gen/src/board/si5324.rs).
localparam IDX_W = @IDX_W@;
localparam [IDX_W-1:0] ROM_LEN = @ROM_LEN@;
reg [IDX_W-1:0] idx = 0;
reg [9:0] rom;
always @* begin
    case (idx)
@ROM@
        default: rom = 10'h000;
    endcase
end
wire rom_start = rom[9];
wire rom_stop = rom[8];
wire [7:0] rom_byte = rom[7:0];

// ---- Sequencer: when the timer `cnt` has run out, the current step acts, loads the
// next step's delay and moves on.
localparam [3:0]
    POWERUP = 4'd0,  // START_DELAY after reset
    NEXT = 4'd1,     // next ROM entry: START, lock wait, or done
    START = 4'd2,    // SDA low while SCL high
    START2 = 4'd3,   // SCL low
    BIT = 4'd4,      // SDA = data bit while SCL low
    BIT_HI = 4'd5,   // SCL released
    BIT_LO = 4'd6,   // SCL low; next bit or ACK
    ACK = 4'd7,      // SDA released while SCL low
    ACK_HI = 4'd8,   // SCL released
    ACK_SMP = 4'd9,  // sample SDA in the middle of the high phase
    ACK_LO = 4'd10,  // SCL low; STOP or next byte
    STOP = 4'd11,    // SDA low while SCL low
    STOP_HI = 4'd12, // SCL released
    STOP_END = 4'd13,// SDA released while SCL high: STOP; bus free time follows
    LOCKED = 4'd14,  // done
    FAILED = 4'd15;  // error

reg [3:0] st = POWERUP;
reg [31:0] cnt = START_DELAY;
reg [2:0] bitn = 3'd7;
reg nack = 1'b0;
reg [3:0] tries = 4'd0;
(* ASYNC_REG = "TRUE" *) reg sda_cdc1 = 1'b1;
(* ASYNC_REG = "TRUE" *) reg sda_cdc2 = 1'b1;

always @(posedge clk) begin
    sda_cdc1 <= sda_i;
    sda_cdc2 <= sda_cdc1;
    if (rst) begin
        st <= POWERUP;
        cnt <= START_DELAY;
        idx <= 0;
        bitn <= 3'd7;
        nack <= 1'b0;
        tries <= 4'd0;
        scl_low <= 1'b0;
        sda_low <= 1'b0;
        done <= 1'b0;
        error <= 1'b0;
    end else if (cnt != 32'd0) begin
        cnt <= cnt - 32'd1;
    end else begin
        case (st)
            POWERUP: st <= NEXT;
            NEXT: begin
                if (idx == ROM_LEN) begin
                    cnt <= LOCK_DELAY;
                    st <= LOCKED;
                end else if (rom_start) begin
                    st <= START;
                end else begin
                    // A ROM entry after a STOP must open a transfer (the generator checks).
                    st <= FAILED;
                end
            end
            START: begin
                sda_low <= 1'b1;
                cnt <= LD_2Q;
                st <= START2;
            end
            START2: begin
                scl_low <= 1'b1;
                bitn <= 3'd7;
                cnt <= LD_Q;
                st <= BIT;
            end
            BIT: begin
                sda_low <= ~rom_byte[bitn];
                cnt <= LD_Q;
                st <= BIT_HI;
            end
            BIT_HI: begin
                scl_low <= 1'b0;
                cnt <= LD_2Q;
                st <= BIT_LO;
            end
            BIT_LO: begin
                scl_low <= 1'b1;
                cnt <= LD_Q;
                if (bitn == 3'd0) begin
                    st <= ACK;
                end else begin
                    bitn <= bitn - 3'd1;
                    st <= BIT;
                end
            end
            ACK: begin
                sda_low <= 1'b0;
                cnt <= LD_Q;
                st <= ACK_HI;
            end
            ACK_HI: begin
                scl_low <= 1'b0;
                cnt <= LD_Q;
                st <= ACK_SMP;
            end
            ACK_SMP: begin
                nack <= sda_cdc2;
                cnt <= LD_Q;
                st <= ACK_LO;
            end
            ACK_LO: begin
                scl_low <= 1'b1;
                cnt <= LD_Q;
                if (nack || rom_stop) begin
                    st <= STOP;
                end else begin
                    idx <= idx + 1'b1;
                    bitn <= 3'd7;
                    st <= BIT;
                end
            end
            STOP: begin
                sda_low <= 1'b1;
                cnt <= LD_Q;
                st <= STOP_HI;
            end
            STOP_HI: begin
                scl_low <= 1'b0;
                cnt <= LD_2Q;
                st <= STOP_END;
            end
            STOP_END: begin
                sda_low <= 1'b0;
                cnt <= LD_2Q;
                if (!nack) begin
                    idx <= idx + 1'b1;
                    st <= NEXT;
                end else if (tries == LAST_TRY) begin
                    st <= FAILED;
                end else begin
                    // Retry from the first entry (the mux selection) after RETRY_DELAY.
                    tries <= tries + 4'd1;
                    nack <= 1'b0;
                    idx <= 0;
                    cnt <= RETRY_DELAY;
                    st <= NEXT;
                end
            end
            LOCKED: done <= 1'b1;
            default: error <= 1'b1;
        endcase
    end
end

endmodule // fanin_si5324_init
